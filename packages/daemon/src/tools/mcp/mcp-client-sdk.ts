/**
 * What the daemon's MCP clients use of the MCP SDK, in one module loaded on
 * first use (see load-mcp-client-sdk.ts): a project without MCP servers never
 * loads the SDK, its zod schemas or its JSON Schema validators.
 */
export { Client } from "@modelcontextprotocol/sdk/client/index.js";
export { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
export { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
export {
  auth,
  discoverOAuthServerInfo,
  extractWWWAuthenticateParams,
  refreshAuthorization,
} from "@modelcontextprotocol/sdk/client/auth.js";
export { OAuthError, ServerError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
export { ErrorCode, McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
