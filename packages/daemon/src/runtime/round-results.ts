/**
 * A round's tool results joining the conversation's history, once every call
 * of the round is final: from the store, or from what the driver holds (the
 * commit of the round's last result). Its own module so that the call runner
 * and the model step reach it without importing the round runner.
 */
import type { CallRow, TurnRow } from "../store/rows.js";
import { parseStored } from "../store/state-error.js";
import type { Writer } from "../store/store.js";
import type { AgentDriver } from "./agent-driver.js";
import { isFinalCall } from "./call-machine.js";
import type { RoundState } from "./round-state.js";
import { announceModelCall } from "./turn-bookkeeping.js";

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
