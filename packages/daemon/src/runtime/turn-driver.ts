import { AgentGoneError, LeaseLostError } from "../store/writer.js";
import type { InputRow, TurnRow } from "../store/rows.js";
import { STATE_FORMAT, StateError } from "../store/state-error.js";
import type { Writer } from "../store/store.js";
import type { AgentDriver } from "./agent-driver.js";
import { ModelCallError } from "./call-model.js";
import { StaleTurn, TurnStop } from "./engine-options.js";
import { modelStep } from "./model-step.js";
import { parentCallOf } from "./caller-budget.js";
import { turnTelemetry } from "./telemetry.js";
import { runRound } from "./round-runner.js";
import { announceModelCall, endedIn } from "./turn-bookkeeping.js";
import { beginTurn, endTurn, type TurnEnd } from "./turn-moves.js";

/** Works through a conversation: its open turn, then turns for queued messages, until none is left. */
export async function runConversation(d: AgentDriver, conversationId: string): Promise<void> {
  while (!d.closed) {
    // A commit is starting a turn here: it kicks this runner once it is durable.
    if (d.conversations.isStarting(conversationId)) return;
    const known = d.conversations.openTurn(conversationId);
    let turn = known === "unknown" ? await d.store.turns.openOf(d.reads, conversationId) : known;
    if (known === "unknown") {
      if (turn) d.conversations.setOpenTurn(conversationId, turn);
      else d.conversations.noOpenTurn(conversationId);
    }
    if (turn?.status === "parked") return;
    // Only look for queued messages where one may be: most turns end with none, and the look costs a commit.
    if (!turn && !d.conversations.mayHaveQueued(conversationId)) return;
    // A turn runs holding one of its org's places; past the org's limit it waits here, its messages queued.
    // A child turn runs in its caller's place (see CALLERS_SLOT).
    const slot = await d.turnSlot(conversationId, turn !== undefined && (await parentCallOf(d, turn.id)) !== null);
    if (!slot) return;
    try {
      // Behind other orgs' backlogs its org's turn comes round (runtime/fair-share.ts); a turn's later steps wait the same way.
      if (!turn) {
        await d.opts.fairShare.enter(d.org);
        turn = await startQueuedTurn(d, conversationId);
      }
      if (!turn) return;
      await driveTurn(d, turn);
    } finally {
      slot.release();
    }
  }
}

/**
 * Starts a turn with the conversation's queued messages, if there are any.
 * The conversation is marked as starting a turn before the claim is sent, in
 * the same step as the check: on PostgreSQL a message queued while the claim
 * is on its way commits beside it (on SQLite it waits for this commit), and
 * found the conversation free it would start a second open turn there.
 */
async function startQueuedTurn(d: AgentDriver, conversationId: string): Promise<TurnRow | undefined> {
  const key = d.conversations.keyOf(conversationId) ?? (await d.store.conversations.get(conversationId, d.reads))?.key;
  if (key === undefined) return undefined;
  // Whether the mark is this start's own: PostgreSQL may run the transaction again after a lost race.
  let marked = false;
  const unmark = () => {
    if (marked) d.conversations.notStarting(conversationId);
    marked = false;
  };
  try {
    return await d.store.tx(async (w) => {
      unmark();
      if (d.conversations.isStarting(conversationId) || d.conversations.hasOpenTurn(conversationId)) return undefined;
      d.conversations.startingTurn(conversationId);
      marked = true;
      d.conversations.clearQueued(conversationId);
      const { run, inputs, more } = await d.store.inputs.claim(w, conversationId, d.store.ids.next("run"));
      if (inputs.length === 0) {
        unmark();
        return undefined;
      }
      // Messages of other calls' child turns, or after one, wait for turns of their own.
      if (more) w.afterCommit(() => d.conversations.markQueued(conversationId));
      return startTurnIn(d, w, { id: conversationId, key }, run, inputs);
    }, d.org);
  } catch (err) {
    // Nothing was taken: the messages are still queued for the next look.
    unmark();
    d.conversations.markQueued(conversationId);
    throw err;
  }
}

/** Starts a turn inside the caller's transaction, and records its first model call as the next step. */
export async function startTurnIn(
  d: AgentDriver,
  w: Writer,
  conversation: { id: string; key: string },
  run: string,
  inputs: InputRow[],
): Promise<TurnRow> {
  // The turn's trace context is stored with it, so every later stretch of the turn joins the same trace.
  const sentBy = inputs.find((i) => i.parentCall !== undefined);
  const parentCall = sentBy?.parentCall;
  const traced = { ...turnTelemetry(d, { id: run, conversation_id: conversation.id }), parentCall, callerTrace: sentBy?.callerTrace };
  const traceContext = d.opts.telemetry.turnStarting(w, traced);
  const { turn, messages } = await beginTurn(w, d.store, d.ref, conversation, run, inputs, traceContext);
  announceModelCall(d, w, run, 1);
  w.afterCommit(() => {
    d.conversations.notStarting(conversation.id);
    d.conversations.setOpenTurn(conversation.id, turn);
    d.progress.announce(run, 1);
    d.progress.rememberParentCall(run, parentCall ?? null);
    const cache = d.cachedPrompt(conversation.id);
    if (cache) for (const m of messages) cache.push({ seq: m.seq, run, message: m.message });
  });
  return turn;
}

/** Advances a turn from whatever state the store holds: fresh, resumed after approval, or recovered. */
export function driveTurn(d: AgentDriver, initial: TurnRow): Promise<void> {
  return d.opts.telemetry.inTurn(turnTelemetry(d, initial), () => advanceTurn(d, initial));
}

async function advanceTurn(d: AgentDriver, initial: TurnRow): Promise<void> {
  let turn = initial;
  const controller = new AbortController();
  const untrack = d.turnStops.track(turn.id, controller);
  // close() aborts the controllers it finds; a turn that starts after it must stop too.
  if (d.closed) controller.abort(new TurnStop("shutdown"));
  // The timeout counts the time the turn runs: waits for a person (parked) move the deadline.
  // The timeout counts the time the turn runs: waits for a person (parked) move the deadline.
  const deadline = Date.parse(turn.started_at) + (turn.parked_ms ?? 0) + d.def.timeout * 1000;
  const timer = setTimeout(() => controller.abort(new TurnStop("timeout")), Math.max(0, deadline - Date.now()));
  const signal = controller.signal;
  // A turn this driver did not just start (recovered, or resumed after a decision).
  const resumed = !d.progress.wasAnnounced(turn.id);
  try {
    if (turn.format > STATE_FORMAT) {
      await d.markUnreadable(
        `Turn ${turn.id} was saved by a newer Wardrik (state format ${turn.format}; this one reads up to ${STATE_FORMAT}).`,
      );
      return;
    }
    // Calls this driver marked running when it saved their round: start them, don't treat them as interrupted.
    let fresh = new Set<string>();
    for (;;) {
      await d.opts.fairShare.enter(d.org);
      if (signal.aborted) throw signal.reason;
      if (turn.rounds > turn.rounds_done) {
        const outcome = await runRound(d, turn, signal, fresh);
        fresh = new Set();
        if (outcome === "parked") return;
        turn = { ...turn, rounds_done: turn.rounds };
        continue;
      }
      if (turn.iterations >= d.def.max_iterations) {
        const reason = `The turn reached max_iterations (${d.def.max_iterations} model calls) without a final answer.`;
        await finishTurn(d, turn, "fail", { reason, code: "max_iterations" });
        return;
      }
      const step = await modelStep(d, turn, signal, resumed);
      if (step === "ended") return;
      turn = step.turn;
      fresh = step.fresh;
    }
  } catch (err) {
    await onTurnError(d, turn, signal, err);
  } finally {
    clearTimeout(timer);
    untrack();
    d.progress.stopped(turn.id);
  }
}

async function onTurnError(d: AgentDriver, turn: TurnRow, signal: AbortSignal, err: unknown): Promise<void> {
  if (err instanceof LeaseLostError) {
    // Another node owns the agent now: this driver stops, and writes nothing more.
    d.opts.log("warn", "a write was refused: another node holds this agent's lease now; this node stops driving it", {
      agent: d.id,
      run: turn.id,
      lease: d.lease,
    });
    d.leaseLost();
    return;
  }
  if (err instanceof StaleTurn || err instanceof AgentGoneError) {
    d.conversations.markUnknown(turn.conversation_id);
    return;
  }
  if (err instanceof StateError) {
    await d.markUnreadable(err.message);
    return;
  }
  const reason: unknown = signal.aborted ? signal.reason : undefined;
  if (reason instanceof TurnStop) {
    if (reason.why === "timeout") {
      await finishTurn(d, turn, "fail", { reason: `The turn took longer than its timeout of ${d.def.timeout} s.`, code: "timeout" });
    }
    // cancelled: the cancel already ended it; shutdown: recovery resumes it.
    return;
  }
  if (err instanceof ModelCallError) {
    const message = `The model call failed: ${err.message}`;
    await finishTurn(d, turn, "fail", { reason: message, code: "model_error" }, (w) => {
      w.emit(d.ref, "model.failed", { error: message, code: "model_error", retryable: err.retryable }, { run: turn.id });
    });
    return;
  }
  d.opts.log("error", "turn failed unexpectedly", { agent: d.id, run: turn.id, err: String(err) });
  await finishTurn(d, turn, "fail", { reason: `Internal error: ${err instanceof Error ? err.message : String(err)}`, code: "internal" });
}

/**
 * Ends the driver's running turn in its own commit (`before` adds to it).
 * A turn someone else already ended is left as it is.
 */
export async function finishTurn(
  d: AgentDriver,
  turn: Pick<TurnRow, "id" | "conversation_id">,
  input: "complete" | "fail",
  end: TurnEnd,
  before?: (w: Writer) => void | Promise<void>,
): Promise<void> {
  await d.store.tx(async (w) => {
    await before?.(w);
    if (await endTurn(w, d.store, d.ref, turn, "running", input, end)) endedIn(d, w, turn);
  }, d.org);
}
