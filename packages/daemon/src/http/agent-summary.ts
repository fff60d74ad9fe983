import type { AgentSummary, WardrikCloudEvent } from "@wardrik/protocol";
import type { StoredEvent } from "../events/event-bus.js";
import { agentStatus, type AgentRow } from "../store/rows.js";
import { parseStored } from "../store/state-error.js";
import type { Store } from "../store/store.js";
import { readQuestion } from "../tools/person-toolset.js";

/** An agent row as the API shows it in lists; `waiting`: a turn of it waits for its org's place (status `queued`). */
export function summarise(r: AgentRow, waiting = false, question?: AgentSummary["question"]): AgentSummary {
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
    ...(question ? { question } : {}),
  };
}

/** The oldest question each parked agent of `rows` waits to have answered (a person/ask call), by agent ID. */
export async function waitingQuestions(store: Store, rows: readonly AgentRow[]): Promise<Map<string, AgentSummary["question"]>> {
  const parked = rows.filter((r) => r.parked_turns > 0).map((r) => r.id);
  const out = new Map<string, AgentSummary["question"]>();
  for (const q of await store.calls.waitingQuestions(parked)) {
    if (out.has(q.agent_id)) continue;
    const asked = readQuestion(parseStored(q.args, `call ${q.id} arguments`));
    if (!("error" in asked)) out.set(q.agent_id, { call: q.id, ...asked });
  }
  return out;
}

/** A stored event as the API shows it: the CloudEvent without the internal routing fields. */
export function toCloudEvent(e: StoredEvent): WardrikCloudEvent {
  const { agent: _agent, org: _org, ...rest } = e;
  return rest;
}
