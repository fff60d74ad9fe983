import type { AgentSummary, WardrikCloudEvent } from "@wardrik/protocol";
import type { StoredEvent } from "../events/event-bus.js";
import { agentStatus, type AgentRow } from "../store/rows.js";

/** An agent row as the API shows it in lists; `waiting`: a turn of it waits for its org's place (status `queued`). */
export function summarise(r: AgentRow, waiting = false): AgentSummary {
  let title = r.name;
  let description = "";
  if (r.definition) {
    try {
      const d = JSON.parse(r.definition) as { title?: string; description?: string };
      title = d.title ?? r.name;
      description = d.description ?? "";
    } catch {
      // an unreadable definition shows as such through status/reason
    }
  }
  return {
    id: r.id,
    org: r.org,
    name: r.name,
    title,
    description,
    status: agentStatus(r, waiting),
    source: r.source,
    ...(r.reason ? { reason: r.reason } : {}),
  };
}

/** A stored event as the API shows it: the CloudEvent without the internal routing fields. */
export function toCloudEvent(e: StoredEvent): WardrikCloudEvent {
  const { agent: _agent, org: _org, ...rest } = e;
  return rest;
}
