import { z } from "zod";
import { McpLoginResult, McpLogoutResult, McpServerList, McpServersQuery, McpServerView, WardrikError } from "@wardrik/protocol";
import type { RouteTable } from "./route-table.js";
import type { ApiServices } from "./services.js";

const ServerName = z.string().regex(/^[A-Za-z0-9_-]{1,55}$/, { error: "must be an MCP server name from config.yaml" });

/**
 * What the browser brings back from the authorization server. Loose on
 * purpose: servers add parameters of their own (`iss`, `session_state`,
 * `scope`), and refusing them would lose a login a person just approved.
 */
const CallbackQuery = z.looseObject({
  state: z.string().optional(),
  code: z.string().optional(),
  error: z.string().optional(),
  error_description: z.string().optional(),
});

/** `wardrik mcp ls|login|logout`, and the OAuth redirect that comes back to the daemon. */
export function registerMcpServerRoutes(routes: RouteTable, svc: ApiServices): void {
  routes.add({
    method: "get",
    path: "/v1/mcp-servers",
    operationId: "listMcpServers",
    tags: ["mcp"],
    summary: "The MCP servers of config.yaml: transport, state, tools and login state for the token's org",
    query: McpServersQuery,
    response: McpServerList,
    handler: async (c, { query }) => c.json({ servers: await svc.mcp.list(c.get("org"), query.connect === "true") }),
  });

  routes.add({
    method: "get",
    path: "/v1/mcp-servers/{name}",
    operationId: "getMcpServer",
    tags: ["mcp"],
    summary: "One MCP server, as the token's org sees it",
    params: { name: ServerName },
    query: McpServersQuery,
    response: McpServerView,
    handler: async (c, { params, query }) => c.json(await svc.mcp.get(c.get("org"), params.name, query.connect === "true")),
  });

  routes.add({
    method: "post",
    path: "/v1/mcp-servers/{name}/login",
    operationId: "loginMcpServer",
    tags: ["mcp"],
    summary: "Start the OAuth login of the token's org to a remote MCP server; open the authorization URL it answers in a browser",
    description:
      "The authorization-code flow with PKCE, as the MCP authorization spec describes it: protected resource metadata, authorization " +
      "server metadata, dynamic client registration unless config.yaml gives a client_id, and the resource parameter. The browser " +
      "comes back to /v1/oauth/callback, which finishes the login.",
    params: { name: ServerName },
    response: McpLoginResult,
    errors: [409],
    handler: async (c, { params }) => {
      const org = c.get("org");
      return c.json({ server: params.name, org, ...(await svc.mcp.login(org, params.name)) });
    },
  });

  routes.add({
    method: "post",
    path: "/v1/mcp-servers/{name}/logout",
    operationId: "logoutMcpServer",
    tags: ["mcp"],
    summary: "Remove the token's org's OAuth grant for an MCP server (its tokens are revoked where the server allows it)",
    params: { name: ServerName },
    response: McpLogoutResult,
    handler: async (c, { params }) => {
      const org = c.get("org");
      return c.json({ server: params.name, org, ...(await svc.mcp.logout(org, params.name)) });
    },
  });

  routes.add({
    method: "get",
    path: "/v1/oauth/callback",
    operationId: "oauthCallback",
    tags: ["mcp"],
    summary: "Where an MCP server's authorization server sends the browser back after a login; answers a page for a person",
    public: true,
    query: CallbackQuery,
    handler: async (c, { query }) => {
      try {
        const { org, server } = await svc.mcp.oauth.callback(query);
        return c.html(page("Logged in", `Wardrik can now use MCP server ${server} for org ${org}. You can close this window.`), 200);
      } catch (err) {
        if (!WardrikError.isInstance(err) || err.status >= 500) throw err;
        return c.html(page("The login did not finish", err.message), 400);
      }
    },
  });
}

function page(title: string, text: string): string {
  const esc = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Wardrik: ${esc(title)}</title></head><body><h1>${esc(title)}</h1><p>${esc(text)}</p></body></html>`;
}
