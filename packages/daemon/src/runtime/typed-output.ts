/**
 * Typed answers: an agent with an `output` schema ends its turn with JSON
 * that fits it. A final reply that does not fit goes back to the model with
 * what is wrong, at most `retries` times a turn (counted in the turn's row,
 * so a restart gives no repairs back); after that the turn fails with code
 * `bad_output`. What the model saw (its reply, the request to repair it) is
 * in the conversation like any other message.
 */
import type { TurnRow } from "../store/rows.js";
import type { Writer } from "../store/store.js";
import type { OutputSchema } from "../config/output-schema.js";
import { schemaProblems } from "../json-schema/schema-problems.js";
import type { AgentDriver } from "./agent-driver.js";
import { StaleTurn } from "./engine-options.js";
import { announceModelCall, endedIn } from "./turn-bookkeeping.js";
import { endTurn } from "./turn-moves.js";

export type CheckedOutput = { fits: true; value: unknown } | { fits: false; problems: string[] };

/** The input ID a repair request carries in the history (it was not sent by anyone: the daemon wrote it). */
export const REPAIR_INPUT = "output_repair";

/**
 * Reads a final reply as JSON and checks it against the schema. A reply
 * wrapped in one Markdown code fence (```json ... ```) counts as its content.
 */
export async function checkOutput(schema: OutputSchema, text: string): Promise<CheckedOutput> {
  const trimmed = text.trim();
  const fenced = /^```[A-Za-z]*\s*\n([\s\S]*?)\n?```$/.exec(trimmed);
  let value: unknown;
  try {
    value = JSON.parse(fenced ? fenced[1]! : trimmed);
  } catch (err) {
    return { fits: false, problems: [`the reply is not JSON (${(err as Error).message})`] };
  }
  const problems = await schemaProblems(schema, value, "reply");
  return problems.length === 0 ? { fits: true, value } : { fits: false, problems };
}

/** What the model is told when its reply does not fit. */
function repairRequest(schema: OutputSchema, problems: string[]): string {
  return [
    "Your last reply does not fit the required output schema:",
    ...problems.map((p) => `- ${p}`),
    "Reply again with only the corrected JSON (no other text). The schema:",
    JSON.stringify(schema),
  ].join("\n");
}

/**
 * A final reply that does not fit, recorded in the caller's transaction
 * (with its assistant message and `model.replied` already written): a repair
 * request and the next model call while repairs are left, else the turn's
 * failure. Returns the turn as it goes on, or "ended".
 */
export async function rejectOutput(
  d: AgentDriver,
  w: Writer,
  turn: TurnRow,
  reply: { iteration: number; costMicros: number; problems: string[] },
): Promise<TurnRow | "ended"> {
  const schema = d.def.output!;
  const repairsLeft = Math.max(0, d.def.retries - turn.repairs);
  const { iteration, costMicros, problems } = reply;
  w.emit(d.ref, "output.rejected", { iteration, problems, repairs_left: Math.max(0, repairsLeft - 1) }, { run: turn.id });
  if (repairsLeft === 0) {
    const tried = turn.repairs === 0 ? "" : ` after ${turn.repairs} repair${turn.repairs === 1 ? "" : "s"}`;
    const reason = `The reply does not fit the agent's output schema${tried}: ${problems.join("; ")}`;
    if (!(await endTurn(w, d.store, d.ref, turn, "running", "fail", { reason, code: "bad_output", iterations: iteration, costMicros })))
      throw new StaleTurn(`turn ${turn.id} is no longer running`);
    endedIn(d, w, turn);
    return "ended";
  }
  if (!(await d.store.turns.recordRepair(w, turn.id, { iterations: iteration, costMicros }))) {
    throw new StaleTurn(`turn ${turn.id} is no longer running`);
  }
  const message = w.appendMessage(d.ref, turn.conversation_id, turn.id, {
    role: "user",
    text: repairRequest(schema, problems),
    input: REPAIR_INPUT,
  });
  w.afterCommit(() => d.cachedPrompt(turn.conversation_id)?.push({ seq: message.seq, run: turn.id, message: message.message }));
  announceModelCall(d, w, turn.id, iteration + 1);
  return { ...turn, iterations: iteration, repairs: turn.repairs + 1, spend_micros: turn.spend_micros + costMicros };
}
