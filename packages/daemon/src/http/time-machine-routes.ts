import { ConversationKey, ForkBody, ForkResult, ReplayBody, ReplayReport } from "@wardrik/protocol";
import { agentOfOrg } from "./agent-lookup.js";
import type { RouteTable } from "./route-table.js";
import type { ApiServices } from "./services.js";

/** The record as a time machine: fork a conversation at an event, replay turns without side effects. */
export function registerTimeMachineRoutes(routes: RouteTable, svc: ApiServices): void {
  routes.add({
    method: "post",
    path: "/v1/agents/{id}/conversations/{key}/fork",
    operationId: "forkConversation",
    tags: ["conversations"],
    summary: "Start a new conversation whose history is this one's as it stood at an event; the original is not changed",
    description:
      "The fork holds every turn of the conversation that had ended by event `at` (a turn still running then is left out), and the compaction summary in force then. It is recorded as conversation.forked.",
    params: { key: ConversationKey },
    body: ForkBody,
    response: ForkResult,
    status: 201,
    errors: [409],
    handler: async (c, { params, body }) => {
      const agent = await agentOfOrg(svc, c.get("org"), params.id);
      return c.json(await svc.runtime.fork(agent, params.key, body.at, body.as), 201);
    },
  });

  routes.add({
    method: "post",
    path: "/v1/agents/{id}/replays",
    operationId: "replay",
    tags: ["conversations"],
    summary: "Run recorded turns (or a new message) again with another model, agent file or policy, answering tools from the record",
    description:
      "The turns run in a scratch copy of the agent (a temporary database with the conversation's history before the first of them), under the chosen policy and budgets. A call with the same tool and arguments as a recorded one gets the recorded result; any other call is answered 'not in the record' unless `live` names its tool. Nothing is written to the agent's record, and its spend is not charged.",
    body: ReplayBody,
    response: ReplayReport,
    handler: async (c, { params, body }) => c.json(await svc.replay(await agentOfOrg(svc, c.get("org"), params.id), body)),
  });
}
