import { WardrikError } from "@wardrik/protocol";
import type { AgentRow } from "../store/rows.js";
import type { ApiServices } from "./services.js";

/** The token's org's agent with this ID; another org's agent answers exactly like a missing one. */
export async function agentOfOrg(svc: ApiServices, org: string, id: string): Promise<AgentRow> {
  const row = await svc.store.agents.get(id);
  if (!row || row.org !== org)
    throw new WardrikError(
      "not_found",
      `No agent ${id}. Agent IDs look like agt_01JF8X5RQ2M3V9ZK0B7Y4T6WHN; list them with GET /v1/agents.`,
    );
  return row;
}
