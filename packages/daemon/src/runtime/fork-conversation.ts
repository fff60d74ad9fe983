import { WardrikError, type ForkResult } from "@wardrik/protocol";
import type { AgentRow } from "../store/rows.js";
import type { AgentRef, Store, Writer } from "../store/store.js";
import { historyAt, type HistoryAt } from "./conversation-at.js";

/**
 * `wardrik fork`: a new conversation whose history is another's as it stood
 * at one event of the agent's log. The original is not touched; the fork is
 * recorded with its origin (conversation.forked). Nothing runs: the new
 * conversation waits for its first message like any other.
 */
export async function forkConversation(
  store: Store,
  agent: AgentRow,
  from: string,
  atSeq: number,
  as: string | undefined,
): Promise<ForkResult> {
  const source = await store.conversations.find(agent.id, from);
  if (!source) throw new WardrikError("not_found", `Agent ${agent.name} has no conversation ${from}.`);
  const last = await store.events.lastSeq(agent.id);
  if (atSeq > last) {
    throw new WardrikError(
      "bad_request",
      `Agent ${agent.name}'s log ends at event ${last}; pick an event from 1 to ${last} (wardrik events ${agent.name}).`,
    );
  }
  const history = await historyAt(store, agent, source, atSeq);
  const key = as ?? `${from}@${atSeq}`;
  const ref = { id: agent.id, org: agent.org };
  const counts = { messages: history.entries.length, turns: history.turns, ...(history.openRun ? { open_run: history.openRun } : {}) };
  const { conversationId, event } = await store.tx(async (w) => {
    const conv = await store.conversations.ensure(w, agent.id, key, w.now);
    if (!conv.created) {
      throw new WardrikError("conflict", `Agent ${agent.name} already has a conversation ${key}; name the fork with --as NEW (body "as").`);
    }
    appendHistory(w, store, ref, conv.id, history);
    const forked = { conversation: key, conversation_id: conv.id, from, from_conversation_id: source.id, at_seq: atSeq, ...counts };
    return { conversationId: conv.id, event: w.emit(ref, "conversation.forked", forked) };
  }, agent.org);
  // The event's seq is known once the commit is done.
  return { conversation: key, conversation_id: conversationId, from, at_seq: atSeq, ...counts, seq: event.seq };
}

/**
 * Appends a history (its messages, in order, and its summary) to an empty
 * conversation in `w`. The messages get new sequence numbers; the summary's
 * boundary follows them.
 */
export function appendHistory(
  w: Writer,
  store: Store,
  ref: AgentRef,
  conversationId: string,
  history: Pick<HistoryAt, "entries" | "summary">,
): void {
  const appended = history.entries.map((e) => ({ from: e.seq, pending: w.appendMessage(ref, conversationId, e.run ?? null, e.message) }));
  const summary = history.summary;
  if (!summary) return;
  // Sequence numbers are known once the writer has flushed: the summary is set right after, in the same commit.
  w.afterFlush(async (tx) => {
    const upto = appended.filter((a) => a.from <= summary.upto).at(-1)?.pending.seq;
    if (upto !== undefined) await store.conversations.setSummary(tx, conversationId, summary.text, upto);
  });
}
