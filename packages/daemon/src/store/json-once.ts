/**
 * The JSON text of a large tool output, made once and reused. The same output
 * object is serialised for its call's row (`result`), to size its history
 * row's part (message-text.ts) and to count the tokens the prompt gives it:
 * for a megabyte result that was three walks of it, one after the other,
 * while every other request waited.
 *
 * Kept only for texts of KEEP_FROM characters or more, in a WeakMap (the
 * entry goes with the output): small outputs cost little to serialise again
 * and would only add entries for each scavenge to visit. Outputs are not
 * changed once a call has them (events, history and the prompt share them).
 */
const texts = new WeakMap<object, string>();
const KEEP_FROM = 8192;

/** `JSON.stringify(value)`, the text of an earlier call for the same large object. */
export function jsonOnce(value: object): string {
  const known = texts.get(value);
  if (known !== undefined) return known;
  const json = JSON.stringify(value);
  if (json.length >= KEEP_FROM) texts.set(value, json);
  return json;
}

/** `JSON.stringify(value ?? null)` through jsonOnce for objects and arrays. */
export function valueJson(value: unknown): string {
  return typeof value === "object" && value !== null ? jsonOnce(value) : JSON.stringify(value ?? null);
}

/** Stands in for a value whose text is known, while the rest of its container is serialised. */
const SLOT = `\u0000json-once-${Math.random().toString(36).slice(2)}-`;

/**
 * `JSON.stringify(data)` for an event's data, reusing the known text of any
 * top-level value serialised before (a call's output, stored with the call
 * just before its call.completed event is written).
 */
export function dataJson(data: Record<string, unknown>): string {
  let swapped: Record<string, unknown> | undefined;
  const known: string[] = [];
  for (const key of Object.keys(data)) {
    const value = data[key];
    const text = typeof value === "object" && value !== null ? texts.get(value) : undefined;
    if (text === undefined) continue;
    (swapped ??= { ...data })[key] = `${SLOT}${known.length}`;
    known.push(text);
  }
  if (!swapped) return JSON.stringify(data);
  let json = JSON.stringify(swapped);
  known.forEach((text, i) => {
    const slot = JSON.stringify(`${SLOT}${i}`);
    const at = json.indexOf(slot);
    json = json.slice(0, at) + text + json.slice(at + slot.length);
  });
  return json;
}
