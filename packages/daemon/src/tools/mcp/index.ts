export { McpToolset } from "./mcp-toolset.js";
export type { McpServerStatus } from "./mcp-toolset.js";
export type { McpToolsetOptions } from "./mcp-toolset-options.js";
export { MCP_DEFAULTS } from "./mcp-toolset-options.js";
export { toToolInfo } from "./to-tool-info.js";
export { toToolOutcome } from "./to-tool-outcome.js";
export type { Attachment } from "./to-tool-outcome.js";
