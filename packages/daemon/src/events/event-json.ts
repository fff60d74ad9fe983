import type { StoredEvent } from "./event-bus.js";

/**
 * The JSON text of an event's data, as the writer serialised it for its row,
 * kept on the event so that the SSE streams build their frames from it
 * instead of serialising the data again. A hidden (non-enumerable) property
 * rather than a WeakMap: a turn makes a dozen events, and every WeakMap entry
 * with a young key is extra work for each scavenge. Being non-enumerable, it
 * is not copied by `{...event}`, so a copy with other data never reuses it.
 */
const DATA_JSON = Symbol("dataJson");

export function keepDataJson(event: StoredEvent, json: string): void {
  Object.defineProperty(event, DATA_JSON, { value: json, enumerable: false });
}

function dataJsonOf(event: StoredEvent): string | undefined {
  return (event as unknown as { [DATA_JSON]?: string })[DATA_JSON];
}

/** The event as its CloudEvent JSON (without the daemon's own `agent` and `org` fields). */
export function cloudEventJson(event: StoredEvent): string {
  const { agent: _agent, org: _org, data, ...head } = event;
  if (data === undefined) return JSON.stringify(head);
  const json = dataJsonOf(event) ?? JSON.stringify(data);
  // `head` always has fields (specversion, id, ...), so its JSON ends in `}` after at least one member.
  return `${JSON.stringify(head).slice(0, -1)},"data":${json}}`;
}
