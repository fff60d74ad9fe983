import type { StoredEvent } from "./event-bus.js";

/**
 * The JSON text of an event's data, as the writer serialised it for its row.
 * Kept beside the event (weakly: it goes when the event goes) so that the SSE
 * streams build their frames from it instead of serialising the data again.
 */
const dataJson = new WeakMap<StoredEvent, string>();

export function keepDataJson(event: StoredEvent, json: string): void {
  dataJson.set(event, json);
}

/** The event as its CloudEvent JSON (without the daemon's own `agent` and `org` fields). */
export function cloudEventJson(event: StoredEvent): string {
  const { agent: _agent, org: _org, data, ...head } = event;
  if (data === undefined) return JSON.stringify(head);
  const json = dataJson.get(event) ?? JSON.stringify(data);
  // `head` always has fields (specversion, id, ...), so its JSON ends in `}` after at least one member.
  return `${JSON.stringify(head).slice(0, -1)},"data":${json}}`;
}
