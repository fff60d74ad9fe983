/** The agents' MCP endpoint (`POST /v1/mcp`): JSON-RPC messages, batches and junk, with and without a session's first steps. */
import { authHeader, httpExchange, type FuzzTarget } from "../exchange.js";
import { fuzzBody, randomJson, randomString } from "../random.js";

const METHODS = ["initialize", "notifications/initialized", "tools/list", "tools/call", "ping", "resources/list", "prompts/get", "nope"];
const TOOLS = ["list_agents", "ask_agent", "follow_agent", "nope"];

export const mcpEndpoint: FuzzTarget = {
  name: "mcp-endpoint",
  async once(r, ctx) {
    const method = r.pick(METHODS);
    const params =
      method === "initialize"
        ? {
            protocolVersion: r.pick(["2025-06-18", "2025-03-26", "1999-01-01"]),
            capabilities: {},
            clientInfo: { name: "fuzz", version: "1" },
          }
        : method === "tools/call"
          ? {
              name: r.pick(TOOLS),
              arguments: r.chance(0.7) ? { agent: r.pick(ctx.known.name ?? ["x"]), message: randomString(r) } : randomJson(r, 3),
            }
          : randomJson(r, 2);
    const message = {
      jsonrpc: "2.0",
      ...(method.startsWith("notifications/") ? {} : { id: r.pick([1, "a", null, 2 ** 53]) }),
      method,
      params,
    };
    const headers: Record<string, string> = {
      ...authHeader(r, ctx),
      "content-type": r.chance(0.95) ? "application/json" : "text/plain",
      accept: r.chance(0.9) ? "application/json, text/event-stream" : "application/json",
    };
    const body = fuzzBody(r, r.chance(0.1) ? [message, message] : message);
    return httpExchange(ctx, "mcp-endpoint", `POST /v1/mcp ${method}`, `${ctx.url}/v1/mcp`, { method: "POST", headers, body });
  },
};
