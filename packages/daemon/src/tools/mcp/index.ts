export { McpToolset } from "./mcp-toolset.js";
export type { McpAuthState, McpServerStatus, McpServerView } from "./mcp-toolset.js";
export { McpOAuth, OAUTH_CALLBACK_PATH, mayUseOAuth } from "./oauth/mcp-oauth.js";
export type { LoginStarted } from "./oauth/oauth-login.js";
export type { McpToolsetOptions } from "./mcp-toolset-options.js";
export { MCP_DEFAULTS } from "./mcp-toolset-options.js";
export { toToolInfo } from "./to-tool-info.js";
export { toToolOutcome } from "./to-tool-outcome.js";
export type { Attachment } from "./to-tool-outcome.js";
