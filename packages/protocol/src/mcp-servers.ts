import { z } from "zod";

/**
 * The daemon's MCP servers as the API shows them (`wardrik mcp ls|login|logout`).
 * Auth states: `none` (a stdio server, or a URL without credentials that never
 * asked for any), `header` (config.yaml gives it an Authorization header),
 * `not_required` (it answered without a login), `unknown` (not reached yet),
 * `authorized` (the org holds an OAuth grant), `login_needed`.
 */
export const McpAuthState = z
  .enum(["none", "header", "not_required", "unknown", "authorized", "login_needed"])
  .meta({ id: "McpAuthState" });

export const McpServerView = z
  .object({
    name: z.string().describe("The server's name in config.yaml: its tool namespace"),
    transport: z.enum(["stdio", "http"]),
    target: z.string().describe("The command (without its arguments) or the URL (without credentials or query)"),
    status: z.enum(["up", "down", "starting", "stopped", "login_needed"]),
    reason: z.string().optional(),
    tools: z.array(z.string()).describe("Tool names without the namespace; empty until the server has run"),
    auth: McpAuthState,
    login: z
      .object({
        pending: z.boolean().describe("A login was started and its link is still valid"),
        expires_at: z.string().optional(),
        error: z.string().optional().describe("Why the last login did not finish"),
        authorized_at: z.string().optional(),
      })
      .optional(),
  })
  .meta({ id: "McpServer" });
export type McpServerView = z.infer<typeof McpServerView>;

export const McpServerList = z.object({ servers: z.array(McpServerView) }).meta({ id: "McpServerList" });
export type McpServerList = z.infer<typeof McpServerList>;

export const McpServersQuery = z.strictObject({
  connect: z
    .enum(["true", "false"])
    .default("true")
    .describe("Start servers whose tools are not known yet (they stop again when unused); false answers from what is known"),
});

export const McpLoginResult = z
  .object({
    server: z.string(),
    org: z.string(),
    authorization_url: z.string().describe("Open it in a browser; the authorization server sends the browser back to redirect_url"),
    redirect_url: z.string(),
    expires_at: z.string(),
  })
  .meta({ id: "McpLoginResult" });
export type McpLoginResult = z.infer<typeof McpLoginResult>;

export const McpLogoutResult = z
  .object({
    server: z.string(),
    org: z.string(),
    removed: z.boolean().describe("A grant was stored and is gone"),
    revoked: z.boolean().describe("The authorization server revoked its tokens"),
  })
  .meta({ id: "McpLogoutResult" });
export type McpLogoutResult = z.infer<typeof McpLogoutResult>;
