import type { CallRow, TurnRow } from "../store/rows.js";
import { parseStored } from "../store/state-error.js";
import type { Writer } from "../store/store.js";
import type { AgentDriver } from "./agent-driver.js";
import { isFinalCall } from "./call-machine.js";
import { runCall } from "./call-runner.js";
import { StaleTurn } from "./engine-options.js";
import type { RoundState } from "./round-state.js";
import { announceModelCall } from "./turn-driver.js";
import { parkTurn } from "./turn-moves.js";

/** Calls of one round in flight at once. */
export const MAX_PARALLEL_CALLS = 8;

/**
 * Runs every call of the turn's last round that is not final; "parked" when
 * some wait for a person. Calls the driver just saved as running (`fresh`)
 * start at once; any other open call is picked up by the recovery rule.
 */
export async function runRound(d: AgentDriver, turn: TurnRow, signal: AbortSignal, fresh: Set<string>): Promise<"done" | "parked"> {
  const round = turn.rounds;
  const state = d.rounds.get(turn.id);
  if (fresh.size > 0 && state?.round === round) {
    const calls = state.calls.filter((c) => fresh.has(c.id));
    await runLimited(calls, MAX_PARALLEL_CALLS, (c) => runCall(d, turn, c, signal, true));
    if (signal.aborted) throw signal.reason;
    if (state.complete) return "done";
  }
  for (;;) {
    const calls = await d.store.calls.ofRound(d.store.db, turn.id, round);
    const open = calls.filter((c) => !isFinalCall(c.status) && c.status !== "waiting");
    if (open.length > 0) {
      await runLimited(open, MAX_PARALLEL_CALLS, (c) => runCall(d, turn, c, signal, false));
      if (signal.aborted) throw signal.reason;
      continue;
    }
    if (calls.some((c) => c.status === "waiting")) {
      if (await parkIfWaiting(d, turn, round)) return "parked";
      continue;
    }
    await d.store.tx(async (w) => {
      await completeRoundFromStore(d, w, turn, round);
    });
    return "done";
  }
}

/**
 * Parks the turn if some call of the round still waits for a person and none
 * is ready to run. The turn row is locked first, as a decision's commit
 * locks it, so a decision cannot land between the check and the park.
 */
async function parkIfWaiting(d: AgentDriver, turn: TurnRow, round: number): Promise<boolean> {
  return d.store.tx(async (w) => {
    if ((await d.store.turns.lock(w, turn.id)) !== "running") throw new StaleTurn(`turn ${turn.id} is no longer running`);
    const calls = await d.store.calls.ofRound(w, turn.id, round);
    const waiting = calls.filter((c) => c.status === "waiting").map((c) => c.id);
    if (waiting.length === 0 || calls.some((c) => c.status === "planned" || c.status === "approved")) return false;
    await parkTurn(w, d.store, d.ref, turn.id, round, waiting);
    w.afterCommit(() => d.openTurns.set(turn.conversation_id, { ...turn, status: "parked" }));
    return true;
  });
}

/** Appends a round's results to the history once every call is final, reading them from the store. */
export async function completeRoundFromStore(d: AgentDriver, w: Writer, turn: TurnRow, round: number): Promise<boolean> {
  const calls = await d.store.calls.ofRound(w, turn.id, round);
  if (calls.some((c) => !isFinalCall(c.status))) return false;
  const results = calls.map((c: CallRow) => ({
    modelCallId: c.model_call_id,
    callId: c.id,
    tool: c.tool,
    isError: c.status !== "completed",
    output: c.result === null ? null : parseStored(c.result, `call ${c.id} result`),
  }));
  return appendResults(d, w, turn, round, results);
}

/** Appends a round's results from what the driver holds (the commit of its last result). */
export async function completeRoundIn(d: AgentDriver, w: Writer, turn: TurnRow, state: RoundState): Promise<boolean> {
  return appendResults(d, w, turn, state.round, state.toolResults());
}

async function appendResults(
  d: AgentDriver,
  w: Writer,
  turn: TurnRow,
  round: number,
  results: ReturnType<RoundState["toolResults"]>,
): Promise<boolean> {
  if (!(await d.store.turns.roundDone(w, turn.id, round))) return false;
  const message = w.appendMessage(d.ref, turn.conversation_id, turn.id, { role: "tool", results });
  w.afterCommit(() => d.cachedPrompt(turn.conversation_id)?.push({ seq: message.seq, run: turn.id, message: message.message }));
  // The next step is a model call unless the turn has used its iterations: say so in this same commit.
  if (turn.iterations < d.def.max_iterations) announceModelCall(d, w, turn.id, turn.iterations + 1);
  return true;
}

async function runLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
