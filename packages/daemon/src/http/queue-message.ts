import { WardrikError } from "@wardrik/protocol";
import type { Enqueued, EnqueueOptions } from "../runtime/enqueue.js";
import type { AgentRow } from "../store/rows.js";
import type { ApiServices } from "./services.js";

/**
 * Queues a message for an agent's conversation: `POST /v1/agents/{id}/messages` and the agents' MCP tools both come here.
 * Through the runtime, which records it here and pokes the node that drives the agent when that is another daemon.
 */
export function queueMessage(
  svc: ApiServices,
  agent: AgentRow,
  conversation: string,
  text: string,
  options?: EnqueueOptions,
): Promise<Enqueued> {
  if (agent.status === "unreadable")
    throw new WardrikError("unreadable", `Agent ${agent.name} is unreadable: ${agent.reason ?? "unknown reason"}`);
  return svc.runtime.enqueue(agent, conversation, text, options);
}
