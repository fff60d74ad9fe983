import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { ConversationKey, PostMessageBody } from "@wardrik/protocol";
import { summarise } from "../http/agent-summary.js";
import type { AgentRow } from "../store/rows.js";

/** The arguments of every agent's tool, checked before anything is queued. */
export const AskArguments = z.strictObject({
  message: PostMessageBody.shape.text,
  conversation: ConversationKey.optional(),
  wait_for_approval: z.boolean().optional(),
});
export type AskArguments = z.output<typeof AskArguments>;

const INPUT_SCHEMA: Tool["inputSchema"] = {
  type: "object",
  properties: {
    message: {
      type: "string",
      minLength: 1,
      description: "What to tell the agent. It is queued like any message to the agent; the agent's reply is the result.",
    },
    conversation: {
      type: "string",
      description: "The conversation to talk in (default main). The same key continues the same history; another key starts another.",
    },
    wait_for_approval: {
      type: "boolean",
      description:
        "When one of the agent's tool calls waits for a person's approval: true keeps this call waiting (with progress notifications) " +
        "until a person decides; false or absent answers at once, saying which call waits and how to approve or deny it.",
    },
  },
  required: ["message"],
  additionalProperties: false,
};

const OUTPUT_SCHEMA: Tool["outputSchema"] = {
  type: "object",
  properties: {
    status: { type: "string", enum: ["completed", "waiting_for_approval"] },
    agent: { type: "string", description: "The agent's ID" },
    conversation: { type: "string" },
    run: { type: "string", description: "The turn's ID, as in the agent's events" },
    reply: { type: "string" },
    approvals: {
      type: "array",
      description: "Calls waiting for a person (status waiting_for_approval)",
      items: {
        type: "object",
        properties: {
          call: { type: "string" },
          tool: { type: "string" },
          args: {},
          reason: { type: "string" },
          approve: { type: "string", description: "The CLI command that approves it" },
          deny: { type: "string", description: "The CLI command that denies it" },
          approve_route: { type: "string", description: "The HTTP route that approves it (POST)" },
          deny_route: { type: "string", description: "The HTTP route that denies it (POST, body {reason})" },
        },
        required: ["call", "tool", "approve", "deny", "approve_route", "deny_route"],
      },
    },
  },
  required: ["status", "agent", "conversation"],
};

/**
 * An agent as an MCP tool: named after the agent (agent names are valid MCP
 * tool names), described by the agent's description, taking a message.
 */
export function agentTool(row: AgentRow): Tool {
  const s = summarise(row);
  return {
    name: row.name,
    title: s.title,
    description: s.description || `Wardrik agent ${row.name}.`,
    inputSchema: INPUT_SCHEMA,
    outputSchema: OUTPUT_SCHEMA,
    // The agent may do anything its tools and policy allow; it is not a read-only lookup.
    annotations: { title: s.title, readOnlyHint: false, openWorldHint: true },
  };
}
