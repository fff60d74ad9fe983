import { WardrikError } from "@wardrik/protocol";
import type { AgentRow, CallRow } from "../store/rows.js";
import { parseStored } from "../store/state-error.js";
import { ASK_PERSON_TOOL, MAX_ANSWER, readQuestion } from "../tools/person-toolset.js";
import { answerCall } from "./call-moves.js";
import type { Runtime } from "./runtime.js";
import { decide, reach } from "./turn-control.js";

/**
 * A person's answer to a question a person/ask call put (`by` names them on
 * the record, as for approvals). The answer is the call's result and the
 * parked turn goes on, on whichever node drives the agent. With choices, the
 * answer must be one of them.
 */
export async function answerQuestion(rt: Runtime, agent: AgentRow, callId: string, answer: string, by?: string): Promise<CallRow> {
  const call = await rt.store.calls.get(callId);
  if (!call || call.agent_id !== agent.id) throw new WardrikError("not_found", `Agent ${agent.name} has no call ${callId}.`);
  if (call.tool !== ASK_PERSON_TOOL)
    throw new WardrikError("not_waiting", `Call ${callId} is a ${call.tool} call, not a question; approve or deny it instead.`);
  if (call.status !== "waiting" || call.error_code !== "question")
    throw new WardrikError("not_waiting", `Call ${callId} is not waiting for an answer (it is ${call.status}).`);
  checkAnswer(call, answer);
  const { d, ref } = await reach(rt, agent);
  const conversation = await decide(rt, d, ref, call, (w) => answerCall(w, rt.store, ref, call, answer, by));
  if (conversation === undefined) {
    const now = await rt.store.calls.get(callId);
    throw new WardrikError("not_waiting", `Call ${callId} is not waiting for an answer (it is ${now?.status ?? call.status}).`);
  }
  d?.kick(conversation);
  return (await rt.store.calls.get(callId))!;
}

/** An empty answer, a too long one, or one outside the question's choices is refused, saying which answers it takes. */
function checkAnswer(call: CallRow, answer: string): void {
  if (answer.trim() === "") throw new WardrikError("bad_request", "The answer is empty; write the answer to the question.");
  if (answer.length > MAX_ANSWER)
    throw new WardrikError("bad_request", `The answer is ${answer.length} characters long; at most ${MAX_ANSWER} are taken.`);
  const question = readQuestion(parseStored(call.args, `call ${call.id} arguments`));
  if ("error" in question || !question.choices || question.choices.includes(answer)) return;
  throw new WardrikError(
    "bad_request",
    `"${answer}" is not one of the choices of call ${call.id}; answer one of: ${question.choices.map((c) => JSON.stringify(c)).join(", ")}.`,
  );
}

/** What a question is, for the parts that show questions and may not reach tools/ (Slack). */
export { ASK_PERSON_TOOL, readQuestion } from "../tools/person-toolset.js";
