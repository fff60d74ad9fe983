import { z } from "zod";

/** Bodies of the HTTP API, shared by the daemon (validation, OpenAPI) and the SDK client. */

export const AgentStatus = z.enum(["idle", "running", "parked", "asleep", "unreadable"]);
export type AgentStatus = z.infer<typeof AgentStatus>;

export const AgentSummary = z.object({
  id: z.string(),
  org: z.string(),
  name: z.string(),
  title: z.string(),
  description: z.string(),
  status: AgentStatus,
  source: z.enum(["file", "api"]),
  reason: z.string().optional().describe("Why the agent is unreadable"),
});
export type AgentSummary = z.infer<typeof AgentSummary>;

export const AgentDetail = AgentSummary.extend({
  model: z.string().optional(),
  tools: z.array(z.string()),
  policy: z.string().optional(),
  max_iterations: z.number().int(),
  timeout: z.number(),
  retries: z.number().int(),
  idle_timeout: z.union([z.number(), z.literal("infinity")]),
  budget: z.number().optional(),
  context_window: z.number().int().optional(),
  instructions: z.string(),
  file: z.string().optional(),
  conversations: z.array(z.object({ id: z.string(), key: z.string(), status: z.string() })),
  waiting_calls: z.array(z.object({ call: z.string(), tool: z.string(), run: z.string(), reason: z.string().optional() })),
  spend: z.object({
    today_usd: z.number(),
    model_usd: z.number(),
    tools_usd: z.number(),
    per_day_cap_usd: z.number().optional(),
    per_turn_cap_usd: z.number().optional(),
  }),
  tool_sources: z.array(z.object({ name: z.string(), status: z.string(), reason: z.string().optional() })),
});
export type AgentDetail = z.infer<typeof AgentDetail>;

export const CreateAgentBody = z.object({
  name: z.string().describe("1-55 letters, digits, _ or -"),
  description: z.string(),
  instructions: z.string().default(""),
  title: z.string().optional(),
  model: z.string().optional(),
  tools: z.array(z.string()).optional(),
  policy: z.string().optional(),
  max_iterations: z.number().int().positive().optional(),
  timeout: z.number().positive().optional(),
  retries: z.number().int().nonnegative().optional(),
  idle_timeout: z.union([z.number().positive(), z.literal("infinity")]).optional(),
  budget: z.number().positive().optional(),
  context_window: z.number().int().positive().optional(),
});
export type CreateAgentBody = z.input<typeof CreateAgentBody>;

export const PostMessageBody = z.object({
  text: z.string().min(1).max(1_000_000),
  conversation: z.string().min(1).max(200).optional().describe("Conversation key; default main"),
});
export type PostMessageBody = z.input<typeof PostMessageBody>;

export const PostMessageResult = z.object({
  message: z.string(),
  conversation: z.string(),
  conversation_id: z.string(),
  seq: z.number().int().describe("Sequence of the message.queued event; follow events after seq - 1"),
});
export type PostMessageResult = z.infer<typeof PostMessageResult>;

export const TurnStatus = z.enum(["running", "parked", "completed", "failed", "cancelled"]);
export const TurnView = z.object({
  id: z.string(),
  agent: z.string(),
  conversation: z.string(),
  status: TurnStatus,
  reason: z.string().optional(),
  reply: z.string().optional(),
  iterations: z.number().int(),
  started_at: z.string(),
  ended_at: z.string().optional(),
  messages: z.array(z.string()),
  calls: z.array(
    z.object({
      id: z.string(),
      tool: z.string(),
      status: z.string(),
      round: z.number().int(),
      reason: z.string().optional(),
    }),
  ),
});
export type TurnView = z.infer<typeof TurnView>;

export const HistoryMessage = z.object({
  seq: z.number().int(),
  role: z.enum(["user", "assistant", "tool"]),
  run: z.string().optional(),
  content: z.unknown(),
  created_at: z.string(),
});
export type HistoryMessage = z.infer<typeof HistoryMessage>;

export const ScopeBody = z.object({ conversation: z.string().optional() });
export const DenyBody = z.object({ reason: z.string().max(10_000).optional() });
