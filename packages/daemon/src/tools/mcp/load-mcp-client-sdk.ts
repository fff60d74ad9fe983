import { loadOptionalModule } from "../../optional-modules.js";
import type * as ClientSdk from "./mcp-client-sdk.js";

export type McpClientSdk = typeof ClientSdk;

let sdk: McpClientSdk | undefined;

/** The MCP SDK's client side, loaded when `reason` (an MCP server, a login) first needs it. */
export async function loadMcpClientSdk(reason: string): Promise<McpClientSdk> {
  return (sdk ??= await loadOptionalModule("@modelcontextprotocol/sdk (client)", reason, () => import("./mcp-client-sdk.js")));
}

/**
 * The SDK if it is loaded. Its errors (McpError, StreamableHTTPError) can
 * only exist once it is, so `undefined` also answers "is this one of them?".
 */
export function loadedMcpClientSdk(): McpClientSdk | undefined {
  return sdk;
}
