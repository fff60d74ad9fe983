import { WardrikError } from "@wardrik/protocol";
import type { Enqueued } from "../runtime/enqueue.js";
import type { AgentRow } from "../store/rows.js";
import type { ApiServices } from "./services.js";

/** Queues a message for an agent's conversation: `POST /v1/agents/{id}/messages` and the agents' MCP tools both come here. */
export function queueMessage(svc: ApiServices, agent: AgentRow, conversation: string, text: string): Promise<Enqueued> {
  if (agent.status === "unreadable")
    throw new WardrikError("unreadable", `Agent ${agent.name} is unreadable: ${agent.reason ?? "unknown reason"}`);
  return svc.runtime.enqueue(agent, conversation, text);
}
