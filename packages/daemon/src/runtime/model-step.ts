import type { LanguageModelV3FunctionTool } from "@ai-sdk/provider";
import { savedCallRow } from "../store/calls.js";
import { toMicros, toUsd } from "../store/money.js";
import type { TurnRow } from "../store/rows.js";
import type { ResolvedTool } from "../tools/tool-registry.js";
import { toModelToolName } from "../tools/toolset.js";
import type { AgentDriver } from "./agent-driver.js";
import { BUDGET_FAILURE, budgetReason, estimateTokens, stopForBudget } from "./budget.js";
import { parentCallOf } from "./caller-budget.js";
import { recordNewCall } from "./call-moves.js";
import { callModel, type CallModelOptions, type ModelReply } from "./call-model.js";
import { maybeCompact } from "./compaction-step.js";
import { firstModel, withFallback } from "./model-fallback.js";
import { StaleTurn } from "./engine-options.js";
import { modelCallTelemetry } from "./telemetry.js";
import { completeRoundIn } from "./round-results.js";
import { RoundState } from "./round-state.js";
import { planCalls, recordJudged, runJudges, waitForMissingTools } from "./plan-round.js";
import { announceModelCall, endedIn } from "./turn-bookkeeping.js";
import { endTurn } from "./turn-moves.js";
import { checkOutput, rejectOutput } from "./typed-output.js";
import { toolPatternsOf } from "../config/types.js";

/**
 * One model call. Its reply commits in one transaction with its events and,
 * when it asks for tools, the whole round: every call with its policy
 * decision (judge rules' models consulted first), allowed calls already
 * marked running (they start right after the commit). A final answer ends
 * the turn in that same commit.
 */
export async function modelStep(
  d: AgentDriver,
  turn: TurnRow,
  signal: AbortSignal,
  resumed: boolean,
): Promise<{ turn: TurnRow; fresh: Set<string> } | "ended"> {
  const resolved = firstModel(d);
  const caps = d.hooks.budget(d.def);
  const scope = { org: d.org, agentId: d.id };
  let tools = await d.tools.resolve(toolPatternsOf(d.def), scope);
  if (resumed && turn.rounds > 0) {
    // After a restart: offer the model the tools this turn used, once their workers are back.
    const used = (await d.store.calls.ofTurn(turn.id, d.reads)).map((c) => toModelToolName(c.tool));
    if (await waitForMissingTools(d, used, tools)) tools = await d.tools.resolve(toolPatternsOf(d.def), scope);
  }
  let cache = await d.prompt(turn.conversation_id);
  if (await maybeCompact(d, turn, resolved, cache, signal)) cache = await d.prompt(turn.conversation_id);
  const prompt = cache.build(d.def.instructions);
  const functionTools = [...tools.values()].map(toFunctionTool);
  const sentMessages = cache.length;
  // A child turn is held to its caller's caps too, even when it has none of its own.
  if (caps.per_day_usd !== undefined || caps.per_turn_usd !== undefined || (await parentCallOf(d, turn.id)) !== null) {
    // What the input will cost, the tool definitions included (a provider bills them as input tokens):
    // a model call that would pass a cap is not made.
    const estimate = resolved.price ? (estimateTokens([...prompt, ...functionTools]) * resolved.price.input) / 1_000_000 : 0;
    const over = await budgetReason(d, turn, caps, estimate);
    if (over) {
      await stopForBudget(d, turn, caps, over, "model call");
      return "ended";
    }
  }
  const iteration = turn.iterations + 1;
  if (d.progress.announcedIteration(turn.id) !== iteration) {
    // Not announced by the commit before (a resumed or recovered turn): record the call before making it.
    await d.store.tx(async (w) => {
      if (!(await d.store.turns.recordReply(w, turn.id, { iterations: turn.iterations, rounds: turn.rounds, costMicros: 0 }))) {
        throw new StaleTurn(`turn ${turn.id} is no longer running`);
      }
      announceModelCall(d, w, turn.id, iteration);
    }, d.org);
  }
  const request: Omit<CallModelOptions, "model" | "price"> = {
    prompt,
    tools: functionTools,
    ...(d.def.output ? { output: d.def.output } : {}),
    signal,
    retries: d.def.retries,
    ...(d.opts.modelBackoffMs !== undefined ? { backoffMs: d.opts.modelBackoffMs } : {}),
    ...(d.hooks.onDelta
      ? {
          onDelta: (text: string) => d.hooks.onDelta?.(d.ref, turn.id, text),
          // Text streamed by a failed attempt is void: followers are told to drop it.
          onRetry: (attempt: number, delayMs: number, error: string) =>
            d.hooks.onDelta?.(d.ref, turn.id, "", true, { attempt, delay_ms: Math.round(delayMs), error }),
        }
      : {}),
  };
  // The agent's models in order: the next answers when one fails in a way that is not the request's fault.
  const { value: reply, model: answered } = await withFallback(d, turn.id, iteration, async (m) => {
    const model = { ref: m.ref, provider: m.model.provider, modelId: m.model.modelId };
    const traced = modelCallTelemetry(d, turn, model, iteration, () => ({ instructions: d.def.instructions, prompt }));
    const started = d.opts.telemetry.modelCallStarted(traced);
    let r: ModelReply;
    try {
      r = await callModel({ ...request, model: m.model, price: m.price });
    } catch (err) {
      d.hooks.onDeltaEnd?.(d.ref, turn.id, false);
      d.opts.telemetry.modelCallEnded(started, undefined, err);
      throw err;
    }
    // Before the reply commits: text held back from the deltas reaches followers ahead of the events that end the call.
    d.hooks.onDeltaEnd?.(d.ref, turn.id, true);
    d.opts.telemetry.modelCallEnded(started, r);
    return { ...r, traced };
  });
  // The reply came in beside other orgs' replies and requests: what it sets off waits its org's turn (runtime/fair-share.ts).
  await d.opts.fairShare.enter(d.org);
  const traced = reply.traced;
  cache.recordUsage(reply.usage.input, sentMessages);
  const costMicros = toMicros(reply.costUsd);
  const replied = {
    model: answered.ref,
    iteration,
    messages: prompt.length,
    input_tokens: reply.usage.input,
    output_tokens: reply.usage.output,
    cached_tokens: reply.usage.cached,
    cost_usd: reply.costUsd,
    finish_reason: reply.finishReason,
    text: reply.text,
    tool_calls: reply.toolCalls.length,
  };
  const conv = turn.conversation_id;

  if (reply.toolCalls.length === 0) {
    // An agent with an output schema ends only with a reply that fits it.
    const checked = d.def.output ? await checkOutput(d.def.output, reply.text) : undefined;
    const next = await d.store.tx(async (w) => {
      const message = w.appendMessage(d.ref, conv, turn.id, { role: "assistant", text: reply.text, toolCalls: [] });
      w.afterCommit(() => d.cachedPrompt(conv)?.push({ seq: message.seq, run: turn.id, message: message.message }));
      w.emit(d.ref, "model.replied", replied, { run: turn.id });
      if (checked && !checked.fits) return rejectOutput(d, w, turn, { iteration, costMicros, problems: checked.problems });
      const ended = await endTurn(w, d.store, d.ref, turn, "running", "complete", {
        reason: null,
        reply: reply.text,
        ...(checked ? { output: checked.value } : {}),
        iterations: iteration,
        costMicros,
      });
      if (!ended) throw new StaleTurn(`turn ${turn.id} is no longer running`);
      endedIn(d, w, turn);
      return "ended" as const;
    }, d.org);
    return next === "ended" ? "ended" : { turn: next, fresh: new Set() };
  }

  const round = turn.rounds + 1;
  await waitForMissingTools(
    d,
    reply.toolCalls.map((tc) => tc.toolName),
    tools,
  );
  const planned = planCalls(d, reply.toolCalls, tools);
  const calls = planned.calls;
  const capped = caps.per_day_usd !== undefined || caps.per_turn_usd !== undefined;
  // Spend so far includes this reply: tool calls past a cap are refused and the turn ends.
  let over = capped ? await budgetReason(d, turn, caps, reply.costUsd) : undefined;
  // Judges decide before the round is saved; they cost like the reply does, and none runs once a cap is passed.
  const judged = over || planned.judges.length === 0 ? [] : await runJudges(d, planned.judges, { prompt, replyText: reply.text, signal });
  const judgeMicros = judged.reduce((n, j) => n + toMicros(j.cost_usd), 0);
  if (!over && capped && judgeMicros > 0) over = await budgetReason(d, turn, caps, toUsd(costMicros + judgeMicros));
  const roundMicros = costMicros + judgeMicros;
  for (const c of calls)
    if (over && c.status !== "failed")
      Object.assign(c, { status: "denied", decision: "deny", reason: over, result: `Refused: ${over}`, errorCode: "budget" });
  const now = d.store.clock.now().toISOString();
  const state = new RoundState(
    turn.id,
    round,
    calls.map((c, position) => savedCallRow(turn.id, d.id, round, position, c, now)),
  );
  await d.store.tx(async (w) => {
    if (!(await d.store.turns.recordReply(w, turn.id, { iterations: iteration, rounds: round, costMicros: roundMicros }))) {
      throw new StaleTurn(`turn ${turn.id} is no longer running`);
    }
    const message = w.appendMessage(d.ref, conv, turn.id, {
      role: "assistant",
      text: reply.text,
      toolCalls: calls.map((c) => ({ modelCallId: c.modelCallId, callId: c.id, tool: c.tool, args: c.args })),
    });
    w.afterCommit(() => d.cachedPrompt(conv)?.push({ seq: message.seq, run: turn.id, message: message.message }));
    w.emit(d.ref, "model.replied", replied, { run: turn.id });
    await d.store.calls.insertRound(w, turn.id, d.id, round, calls, w.now);
    w.emit(
      d.ref,
      "round.saved",
      { round, calls: calls.map((c) => ({ call: c.id, tool: c.tool, args: c.args, read_only: c.readOnly, idempotent: c.idempotent })) },
      { run: turn.id },
    );
    recordJudged(w, d, turn.id, judged);
    for (const c of calls) recordNewCall(w, d.ref, turn.id, c);
    w.afterCommit(() => d.opts.telemetry.callsPlanned(traced, calls));
    if (over) {
      w.emit(d.ref, "budget.exceeded", { reason: over, refused: "tool calls", ...caps, ...BUDGET_FAILURE }, { run: turn.id });
      if (await endTurn(w, d.store, d.ref, turn, "running", "fail", { reason: over, code: "budget" })) endedIn(d, w, turn);
    } else if (state.complete) {
      await completeRoundIn(d, w, { ...turn, iterations: iteration, rounds: round }, state);
    }
  }, d.org);
  if (over) return "ended";
  d.progress.saveRound(turn.id, state);
  return {
    turn: {
      ...turn,
      iterations: iteration,
      rounds: round,
      spend_micros: turn.spend_micros + roundMicros,
      rounds_done: state.complete ? round : turn.rounds_done,
    },
    fresh: new Set(calls.filter((c) => c.status === "running").map((c) => c.id)),
  };
}

function toFunctionTool(t: ResolvedTool): LanguageModelV3FunctionTool {
  return {
    type: "function",
    name: t.modelName,
    description: t.description,
    inputSchema: t.inputSchema as LanguageModelV3FunctionTool["inputSchema"],
  };
}
