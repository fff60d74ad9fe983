import type { PromptCache } from "../models/build-prompt.js";
import {
  chooseSplit,
  COMPACTION_INSTRUCTIONS,
  COMPACTION_THRESHOLD,
  countTokens,
  KEEP_RECENT_SHARE,
  loadTokenizer,
  messageText,
  transcript,
} from "../models/compaction.js";
import { toMicros } from "../store/money.js";
import type { TurnRow } from "../store/rows.js";
import type { AgentDriver } from "./agent-driver.js";
import { callModel } from "./call-model.js";
import { StaleTurn } from "./engine-options.js";
import { smallestWindow, withFallback } from "./model-fallback.js";
import type { ResolvedModelRef } from "./types.js";

/**
 * Folds the older part of the conversation into a summary when the next
 * prompt would pass the threshold share of the context window. The full
 * history stays in the store; only the model's view changes.
 */
export async function maybeCompact(
  d: AgentDriver,
  turn: TurnRow,
  resolved: ResolvedModelRef,
  cache: PromptCache,
  signal: AbortSignal,
): Promise<boolean> {
  const window = d.def.context_window ?? smallestWindow(d) ?? resolved.contextWindow;
  if (!window) return false;
  const threshold = window * COMPACTION_THRESHOLD;
  let estimate = cache.estimateTokens(d.def.instructions);
  if (estimate < threshold * 0.5) return false;
  await loadTokenizer();
  cache.recount();
  estimate = cache.estimateTokens(d.def.instructions);
  if (estimate < threshold) return false;

  const conv = await d.store.conversations.get(turn.conversation_id);
  const entries = await d.store.conversations.history(turn.conversation_id, conv?.summary_upto ?? 0);
  const split = chooseSplit(entries, window * KEEP_RECENT_SHARE, (e) => countTokens(messageText(e.message)));
  if (split <= 0) return false;
  const folded = entries.slice(0, split);
  const previous = conv?.summary ? `Summary so far:\n${conv.summary}\n\nWhat happened next:\n` : "";
  // The summary is asked of the agent's models in order, like its replies.
  const { value: reply, model: used } = await withFallback(d, turn.id, turn.iterations + 1, (m) =>
    callModel({
      model: m.model,
      prompt: [
        { role: "system", content: COMPACTION_INSTRUCTIONS },
        { role: "user", content: [{ type: "text", text: previous + transcript(folded) }] },
      ],
      tools: [],
      signal,
      retries: d.def.retries,
      price: m.price,
      ...(d.opts.modelBackoffMs !== undefined ? { backoffMs: d.opts.modelBackoffMs } : {}),
    }),
  );
  const summary = reply.text.trim();
  if (!summary) return false;
  const upto = folded[folded.length - 1]!.seq;
  await d.store.tx(async (w) => {
    if (
      !(await d.store.turns.recordReply(w, turn.id, {
        iterations: turn.iterations,
        rounds: turn.rounds,
        costMicros: toMicros(reply.costUsd),
      }))
    ) {
      throw new StaleTurn(`turn ${turn.id} is no longer running`);
    }
    await d.store.conversations.setSummary(w, turn.conversation_id, summary, upto);
    w.emit(
      d.ref,
      "conversation.compacted",
      {
        conversation_id: turn.conversation_id,
        folded_messages: folded.length,
        from_seq: folded[0]!.seq,
        upto_seq: upto,
        kept_messages: entries.length - folded.length,
        tokens_before: estimate,
        context_window: window,
        summary,
        model: used.ref,
        input_tokens: reply.usage.input,
        output_tokens: reply.usage.output,
        cost_usd: reply.costUsd,
      },
      { run: turn.id },
    );
  }, d.org);
  d.forgetPrompt(turn.conversation_id);
  return true;
}
