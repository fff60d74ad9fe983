import { childRunOf } from "../ids.js";
import type { Tx } from "../store/db.js";
import type { AgentRow } from "../store/rows.js";
import { CALLERS_SLOT, type TurnSlot } from "./org-turn-slots.js";
import type { Runtime } from "./runtime.js";
import { startTurnIn } from "./turn-driver.js";

export interface Enqueued {
  message: string;
  conversation: string;
  conversation_id: string;
  /** The message.queued event's position in the agent's log. */
  seq: number;
}

/**
 * Queues a message for a conversation. When nothing drives the conversation
 * the turn starts in the same commit, one commit fewer per turn; otherwise
 * the conversation's runner takes it after the open turn.
 */
export interface EnqueueOptions {
  /** Runs in the transaction that queues the message, once its sequence number is known (an idempotent answer). */
  inTransaction?: (tx: Tx, queued: Enqueued) => Promise<void>;
  /** The `agents/NAME` call that sends the message: the turn that takes it is that call's child turn. */
  parentCall?: string | undefined;
  /** That call's trace context, kept with the message so the child turn joins the call's trace wherever it runs. */
  callerTrace?: string | undefined;
}

export async function enqueue(
  rt: Runtime,
  agent: AgentRow,
  conversationKey: string,
  text: string,
  options: EnqueueOptions = {},
): Promise<Enqueued> {
  const d = await rt.driverIfOwned(agent.id);
  if (!d) return enqueueElsewhere(rt, agent, conversationKey, text, options);
  const message = rt.store.ids.next("message");
  const cached = d.conversations.idOf(conversationKey);
  let starting: string | undefined;
  // The org's place for the turn this message may start; none free, and the message waits for its turn like any queued one.
  let slot: TurnSlot | undefined;
  const { conversationId, event, started } = await rt.store
    .tx(async (w) => {
      // PostgreSQL may run this again after a lost race: the rolled-back attempt's mark must not hold the conversation.
      if (starting) d.conversations.notStarting(starting);
      starting = undefined;
      const conv = cached
        ? { id: cached, key: conversationKey, created: false }
        : await rt.store.conversations.ensure(w, agent.id, conversationKey, w.now);
      if (conv.created) d.primeEmptyPrompt(conv.id);
      // Marked at once, so a second message in the same group commit queues behind this turn instead of starting another.
      const takeSlot = () => (options.parentCall !== undefined ? CALLERS_SLOT : rt.opts.turnSlots.tryTake(agent.org));
      // A child turn's ID was fixed by its call (see childRunOf).
      const nextRun = () => (options.parentCall !== undefined ? childRunOf(options.parentCall) : rt.store.ids.next("run"));
      const run = d.canStartAt(conv.id) && (slot ??= takeSlot()) ? nextRun() : undefined;
      if (run) d.conversations.startingTurn((starting = conv.id));
      else d.conversations.markQueued(conv.id);
      const { parentCall, callerTrace } = options;
      const queued = w.emit(d.ref, "message.queued", { message, conversation: conversationKey, conversation_id: conv.id, text });
      // After the flush, when the event's place in the log is known: a large text is kept there only (message-text.ts).
      const input = { id: message, agentId: agent.id, conversationId: conv.id, text, parentCall, callerTrace, textIn: queued };
      w.afterFlush((tx) => rt.store.inputs.insert(tx, run ? { ...input, run } : input, w.now));
      const inTransaction = options.inTransaction;
      if (inTransaction) {
        w.afterFlush((tx) => inTransaction(tx, { message, conversation: conversationKey, conversation_id: conv.id, seq: queued.seq }));
      }
      if (run)
        await startTurnIn(d, w, { id: conv.id, key: conversationKey }, run, [
          { id: message, text, parentCall, callerTrace, textIn: queued },
        ]);
      w.afterCommit(() => {
        // The runner that drives the started turn holds the place until the turn ends or parks.
        if (run) d.handOverSlot(conv.id, slot!);
        d.conversations.rememberKey(conversationKey, conv.id);
        // Again once durable: a look for queued messages that ran before this commit could not see this one.
        if (!run) d.conversations.markQueued(conv.id);
      });
      return { conversationId: conv.id, event: queued, started: run !== undefined };
    }, agent.org)
    .catch((err: unknown) => {
      if (starting) d.conversations.notStarting(starting);
      slot?.release();
      throw err;
    });
  if (!started) slot?.release();
  d.kick(conversationId);
  return { message, conversation: conversationKey, conversation_id: conversationId, seq: event.seq };
}

/** Another node drives the agent: the message is queued here and its owner poked in the same commit. */
async function enqueueElsewhere(
  rt: Runtime,
  agent: AgentRow,
  conversationKey: string,
  text: string,
  options: EnqueueOptions,
): Promise<Enqueued> {
  const message = rt.store.ids.next("message");
  const ref = { id: agent.id, org: agent.org };
  const { conversationId, queued } = await rt.store.tx(async (w) => {
    const conv = await rt.store.conversations.ensure(w, agent.id, conversationKey, w.now);
    const event = w.emit(ref, "message.queued", { message, conversation: conversationKey, conversation_id: conv.id, text });
    w.afterFlush(async (tx) => {
      const { parentCall, callerTrace } = options;
      const input = { id: message, agentId: agent.id, conversationId: conv.id, text, parentCall, callerTrace, textIn: event };
      await rt.store.inputs.insert(tx, input, w.now);
      await rt.ownership.poke(tx, agent.id, { kind: "work" });
      await options.inTransaction?.(tx, { message, conversation: conversationKey, conversation_id: conv.id, seq: event.seq });
    });
    return { conversationId: conv.id, queued: event };
  }, agent.org);
  return { message, conversation: conversationKey, conversation_id: conversationId, seq: queued.seq };
}
