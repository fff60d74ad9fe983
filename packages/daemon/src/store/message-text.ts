/**
 * Where a message's text (and a tool's output) is stored. A short one is copied where it is read
 * (its inputs row, its history row, its message.queued event); a large one
 * (LARGE_TEXT_CHARS or more) is written once, in its message.queued event,
 * and the other two rows name that event by its place in the agent's log:
 * the inputs row in `text_seq` (keeping the text's first TEXT_PREFIX_CHARS
 * for listings), the history row as `textSeq` with an empty `text`.
 *
 * A successful tool output of LARGE_TEXT_CHARS or more characters of JSON
 * is likewise kept once in its history row's stead: in its call's `result`
 * (the round's results are its calls' results), the row's part marked
 * `outputInCall`. Its call.completed event still carries it.
 *
 * Why: the three copies of a megabyte message made one commit write three
 * megabytes, during which the daemon answered nobody else. The event holds
 * the text as the history row did, redacted (the inputs row held it as
 * sent; a large message read back through the event, for a queued turn or a
 * replay, is the redacted text the model was given).
 */
import type { Tx } from "./db.js";
import { StateError } from "./state-error.js";

/** From this many characters on, a message's text is stored only in its message.queued event. */
export const LARGE_TEXT_CHARS = 8192;
/** What an inputs row keeps of a large text: its start, enough for listings (which show 200 characters). */
export const TEXT_PREFIX_CHARS = 1024;

/** The message.queued event holding a text; its `seq` is read when the row naming it is written (after the flush). */
export interface TextEvent {
  readonly seq: number;
}

/** Whether `text` is stored by reference to `event` (large, and an event holds it). */
export function storedByReference(text: string, event: TextEvent | undefined): event is TextEvent {
  return event !== undefined && text.length >= LARGE_TEXT_CHARS;
}

/** The text of the message.queued event at `seq` in agent `agentId`'s log; a missing or unreadable one is a StateError. */
export async function queuedText(tx: Pick<Tx, "get">, agentId: string, seq: number): Promise<string> {
  const row = await tx.get<{ type: string; data: string }>("SELECT type, data FROM events WHERE agent_id = ? AND seq = ?", [agentId, seq]);
  const what = `event ${seq} of agent ${agentId}, which holds a message's text,`;
  if (!row) throw new StateError(`The ${what} is missing.`);
  let text: unknown;
  try {
    text = (JSON.parse(row.data) as { text?: unknown }).text;
  } catch (err) {
    throw new StateError(`The ${what} cannot be read: ${(err as Error).message}`);
  }
  if (!row.type.endsWith(".message.queued") || typeof text !== "string") throw new StateError(`The ${what} holds no text.`);
  return text;
}
