import { AgentTools } from "@wardrik/protocol";
import { agentOfOrg } from "./agent-lookup.js";
import type { RouteTable } from "./route-table.js";
import type { ApiServices } from "./services.js";

/** `GET /v1/agents/{id}/tools`: what an agent can call, for `wardrik tools` and for writing policy rules. */
export function registerToolRoutes(routes: RouteTable, svc: ApiServices): void {
  routes.add({
    method: "get",
    path: "/v1/agents/{id}/tools",
    operationId: "listAgentTools",
    tags: ["agents"],
    summary: "The tools an agent can call (policy names, model names, source, read-only, idempotent) and patterns that match nothing",
    response: AgentTools,
    handler: async (c, { params }) => c.json(await svc.describeTools(await agentOfOrg(svc, c.get("org"), params.id))),
  });
}
