import { WardrikError } from "@wardrik/protocol";
import type { AgentRow, ConversationRow } from "../store/rows.js";
import type { ApiServices } from "./services.js";

/** The token's org's agent with this ID; another org's agent answers exactly like a missing one. */
export async function agentOfOrg(svc: ApiServices, org: string, id: string): Promise<AgentRow> {
  const row = await svc.store.agents.get(id, svc.store.db.readsFor(org));
  if (!row || row.org !== org)
    throw new WardrikError(
      "not_found",
      `No agent ${id}. Agent IDs look like agt_01JF8X5RQ2M3V9ZK0B7Y4T6WHN; list them with GET /v1/agents.`,
    );
  return row;
}

/** The agent's conversation with this key; a 404 that names both when it has none. */
export async function conversationOf(svc: ApiServices, agent: AgentRow, key: string): Promise<ConversationRow> {
  const conv = await svc.store.conversations.find(agent.id, key);
  if (!conv) throw new WardrikError("not_found", `Agent ${agent.name} has no conversation ${key}.`);
  return conv;
}
