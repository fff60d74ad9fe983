import type { CallRow } from "../store/rows.js";
import type { LateAnswer } from "../tools/toolset.js";
import { completeCall, completeLate, failCall } from "./call-moves.js";
import { isFinalCall } from "./call-machine.js";
import type { Runtime } from "./runtime.js";
import { decide, reach } from "./turn-control.js";

/**
 * An answer for a call nobody in this process waits for: a worker kept
 * running it through a restart, or its connection came back after the call
 * was handed to a person. The call completes (and its turn goes on) if it is
 * still open. A call recorded failed because no worker served it becomes
 * what happened (see completeLateAnswer); an answer for any other final call
 * is dropped.
 */
export async function acceptLateAnswer(rt: Runtime, org: string, answer: LateAnswer): Promise<boolean> {
  const { callId, outcome } = answer;
  const found = await rt.store.calls.get(callId);
  if (found?.status === "failed" && found.error_code === "no_worker") return completeLateAnswer(rt, org, found, answer);
  if (!found || isFinalCall(found.status) || found.status === "planned") return false;
  if (found.status === "waiting" && found.error_code !== "lost") return false;
  // The call was started again since this attempt: the later attempt answers (it may be on its way to another worker
  // process, which would run it after this answer had been stored). Checked again by the write itself.
  if (found.attempts > answer.attempt) return false;
  const call = { ...found, answerOf: answer.attempt };
  const agent = await rt.store.agents.get(call.agent_id);
  // Only a worker of the call's own org may answer it.
  if (!agent || agent.org !== org || agent.status === "unreadable") return false;
  const { d, ref } = await reach(rt, agent);
  const from = call.status as "running" | "waiting" | "approved";
  const conversation = await decide(rt, d, ref, call, async (w) => {
    const moved = outcome.ok
      ? await completeCall(w, rt.store, ref, call, from, outcome.output ?? null, 0, answer.attempt)
      : await failCall(w, rt.store, ref, call, outcome.error, "tool_error", 0, from);
    // An attempt still in flight on the owner (a safe call retried meanwhile) has nothing left to do: stop it.
    if (moved && !d) w.afterFlush((tx) => rt.ownership.poke(tx, call.agent_id, { kind: "kill", call: callId }));
    return moved;
  });
  if (conversation === undefined) return false;
  d?.calls.kill(callId);
  d?.kick(conversation);
  return true;
}

/**
 * A call recorded failed "No worker serves ..." (after a restart or a
 * takeover no worker came back within the grace), whose earlier attempt a
 * worker had run after all: its answer turns the record into what happened,
 * a call.completed with `late: true`. The model already heard the failure;
 * it is told in its next input, by a note after the round's results (or, if
 * the round is still open, by the round's results themselves).
 */
async function completeLateAnswer(rt: Runtime, org: string, call: CallRow, answer: LateAnswer): Promise<boolean> {
  // Only an attempt that was sent to a worker can have run; a failed run stays a failure.
  if (!answer.outcome.ok || answer.attempt > call.attempts) return false;
  const agent = await rt.store.agents.get(call.agent_id);
  if (!agent || agent.org !== org || agent.status === "unreadable") return false;
  const { d, ref } = await reach(rt, agent);
  const output = answer.outcome.output ?? null;
  return rt.store.tx(async (w) => {
    const turn = await rt.store.turns.lockProgress(w, call.run);
    if (!turn || !(await completeLate(w, rt.store, ref, call, output, answer.attempt))) return false;
    if (turn.rounds_done >= call.round) {
      const note = lateNote(call, output);
      const message = w.appendMessage(ref, turn.conversation_id, call.run, { role: "user", text: note, input: call.id });
      w.afterCommit(() => d?.cachedPrompt(turn.conversation_id)?.push({ seq: message.seq, run: call.run, message: message.message }));
    } else if (d) {
      w.afterCommit(() => d.progress.round(call.run)?.settle(call.id, false, output));
    }
    // The owner elsewhere reads the history (and the open round) again.
    if (!d) w.afterFlush((tx) => rt.ownership.poke(tx, call.agent_id, { kind: "late", run: call.run, call: call.id }));
    return true;
  }, org);
}

/** What the model reads about a call it was told had failed for lack of a worker. */
export function lateNote(call: Pick<CallRow, "id" | "tool">, output: unknown): string {
  return (
    `[Note from Wardrik, not from a person] The call ${call.id} to ${call.tool} was reported to you as failed because no worker ` +
    `was connected, but a worker had run it after all and it completed. Its result: ${JSON.stringify(output)}`
  );
}
