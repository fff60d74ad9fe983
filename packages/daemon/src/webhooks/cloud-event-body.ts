import type { EventRow } from "../store/events.js";

/**
 * A delivery's body: the event as a structured CloudEvent (what the event
 * feeds serve, without the daemon's own `agent` and `org` fields), written
 * straight from its stored row. The data is the row's JSON text as the
 * writer serialised it, never parsed and serialised again: the sender runs
 * beside the turns, and that was most of what a body cost. Same members, in
 * the same order, as `cloudEventJson(toEvent(row))`.
 */
export function cloudEventBody(e: EventRow): string {
  let body = `{"specversion":"1.0","id":${JSON.stringify(e.id)},"source":${JSON.stringify(`/orgs/${e.org}/agents/${e.agent_id}`)},"type":${JSON.stringify(e.type)},"time":${JSON.stringify(e.time)}`;
  if (e.subject) body += `,"subject":${JSON.stringify(e.subject)}`;
  body += `,"datacontenttype":"application/json","seq":${Number(e.seq)}`;
  if (e.run) body += `,"run":${JSON.stringify(e.run)}`;
  return `${body},"data":${e.data}}`;
}
