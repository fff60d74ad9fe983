/** What an agent can call, as the API shows it, and the tool patterns of an agent that match nothing. */
import { z } from "zod";

/** A tool pattern of an agent that matches no tool, and why. */
export const ToolPatternProblem = z.object({ pattern: z.string(), reason: z.string() }).meta({ id: "ToolPatternProblem" });
export type ToolPatternProblem = z.infer<typeof ToolPatternProblem>;

/** What an agent can call (`GET /v1/agents/{id}/tools`), for writing policy rules. */
export const AgentTools = z
  .object({
    patterns: z.array(z.string()).describe("The agent's tool patterns, as its file writes them"),
    tools: z.array(
      z.object({
        name: z.string().describe("The name policies and agent files use: workers/find_order"),
        model_name: z.string().describe("The name the model sees: workers__find_order"),
        source: z.enum(["builtin", "worker", "mcp"]),
        namespace: z.string(),
        title: z.string().optional().describe("The tool's display name, when its source gives one"),
        description: z.string(),
        read_only: z.boolean(),
        idempotent: z.boolean(),
        input_schema: z.record(z.string(), z.unknown()).describe("JSON Schema of the tool's arguments, as the model receives it"),
        served_by: z
          .array(z.string())
          .optional()
          .describe("Worker tools: the worker connections serving it now (NAME (worker ID)), and other nodes of a cluster"),
      }),
    ),
    unmatched: z
      .array(
        ToolPatternProblem.extend({
          expected: z.boolean().describe("True when nothing is wrong yet: no worker serving it is connected right now"),
        }),
      )
      .describe("Patterns that match no tool right now"),
    skipped: z
      .array(z.object({ namespace: z.string(), tool: z.string(), reason: z.string() }))
      .describe("Tools a source offers that Wardrik does not pass to models"),
  })
  .meta({ id: "AgentTools" });
export type AgentTools = z.infer<typeof AgentTools>;
