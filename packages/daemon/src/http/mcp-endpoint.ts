import type { Hono } from "hono";
import { WardrikError } from "@wardrik/protocol";
import { loadOptionalModule } from "../optional-modules.js";
import type { ApiEnv } from "./api-env.js";
import type { ApiServices } from "./services.js";
import { parseRequestJson } from "./untrusted-json.js";

export const MCP_PATH = "/v1/mcp";

/** The MCP SDK's server side and the agents' server on it, loaded by the endpoint's first request. */
function loadServerSide() {
  return loadOptionalModule("@modelcontextprotocol/sdk (server)", `the agents' MCP endpoint ${MCP_PATH}`, async () => {
    const [{ agentsMcpServer }, { WebStandardStreamableHTTPServerTransport }] = await Promise.all([
      import("../agent-mcp/agents-mcp-server.js"),
      import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
    ]);
    return { agentsMcpServer, WebStandardStreamableHTTPServerTransport };
  });
}

/**
 * The org's agents over MCP (streamable HTTP) at `/v1/mcp`, behind the same
 * bearer tokens as every route: a token sees its own org's agents; the admin
 * token another org's with `Wardrik-Org`.
 *
 * Stateless: every POST gets a server and a transport of its own, answers
 * (streaming progress notifications while a call runs) and is done. No
 * session outlives a request, so any daemon of a cluster can serve any
 * request and a restart loses nothing. Without sessions there is no stream
 * for GET nor a session to DELETE: both answer 405, as the MCP spec allows.
 *
 * Mounted on the app directly rather than through RouteTable: the body is
 * JSON-RPC, which the SDK's transport answers itself. The body is parsed
 * here, within the daemon's limits, and handed to the transport parsed. The
 * SDK loads with the first request: most daemons never serve one.
 */
export function registerMcpEndpoint(app: Hono<ApiEnv>, svc: ApiServices): void {
  app.post(MCP_PATH, async (c) => {
    let parsedBody: unknown;
    try {
      parsedBody = parseRequestJson(c, await c.req.text(), "The message");
    } catch (err) {
      if (!WardrikError.isInstance(err)) throw err;
      return rpcError(err.status, -32700, err.message);
    }
    const { agentsMcpServer, WebStandardStreamableHTTPServerTransport } = await loadServerSide();
    const server = agentsMcpServer(svc, c.get("org"));
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await server.connect(transport);
    // The client went away (or the daemon stops): calls in flight stop waiting; their turns go on.
    const close = () => void server.close().catch(() => undefined);
    const signal = c.req.raw.signal;
    if (signal.aborted) close();
    else signal.addEventListener("abort", close, { once: true });
    const res = await transport.handleRequest(c.req.raw, { parsedBody });
    // A notification's 202 or a JSON error ends the exchange at once; a stream ends when its last answer is sent.
    if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) close();
    return res;
  });
  const notAllowed = () =>
    rpcError(405, -32000, "Method not allowed: this endpoint keeps no sessions; send every message with POST.", { allow: "POST" });
  app.get(MCP_PATH, notAllowed);
  app.delete(MCP_PATH, notAllowed);
}

/** An answer in JSON-RPC's error shape, as MCP clients read it (not the API's error body). */
function rpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { ...headers, "content-type": "application/json" },
  });
}
