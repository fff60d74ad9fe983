import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { toModelToolName, type ToolInfo } from "../toolset.js";

/** What model providers accept as a function name (OpenAI and Anthropic agree on this). */
const MODEL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export type ToolInfoResult = { info: ToolInfo } | { skipped: string };

/**
 * An MCP tool as Wardrik offers it: `namespace/name`, the server's input
 * schema and description as they are. Annotations are hints, so only an
 * explicit `true` counts: without hints a tool is neither read-only nor
 * idempotent, and needs approval by default.
 */
export function toToolInfo(namespace: string, tool: Tool): ToolInfoResult {
  const name = `${namespace}/${tool.name}`;
  const modelName = toModelToolName(name);
  if (!MODEL_NAME.test(modelName)) {
    return {
      skipped: `tool "${tool.name}" of MCP server "${namespace}" is not offered: the model would see it as "${modelName}", and model providers accept only 1-64 letters, digits, "_" and "-"`,
    };
  }
  const title = tool.title ?? tool.annotations?.title;
  return {
    info: {
      name,
      description: tool.description ?? title ?? `${tool.name} (the MCP server "${namespace}" gives no description)`,
      ...(title ? { title } : {}),
      inputSchema: tool.inputSchema as Record<string, unknown>,
      readOnly: tool.annotations?.readOnlyHint === true,
      idempotent: tool.annotations?.idempotentHint === true,
    },
  };
}
