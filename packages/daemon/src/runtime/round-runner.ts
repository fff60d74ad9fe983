import type { TurnRow } from "../store/rows.js";
import type { AgentDriver } from "./agent-driver.js";
import { isFinalCall } from "./call-machine.js";
import { runCall } from "./call-runner.js";
import { StaleTurn } from "./engine-options.js";
import { completeRoundFromStore } from "./round-results.js";
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
  const state = d.progress.round(turn.id);
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
    }, d.org);
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
    w.afterCommit(() => d.conversations.setOpenTurn(turn.conversation_id, { ...turn, status: "parked" }));
    return true;
  }, d.org);
}

async function runLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
