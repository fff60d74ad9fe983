import { WardrikError } from "@wardrik/protocol";
import type { McpToolset, McpServerView } from "./mcp-toolset.js";
import type { McpOAuth } from "./oauth/mcp-oauth.js";
import type { LoginStarted } from "./oauth/oauth-login.js";

/** The MCP servers of config.yaml as people manage them: `wardrik mcp ls|login|logout` and the OAuth callback. */
export class McpServers {
  private readonly byName: Map<string, McpToolset>;

  constructor(
    toolsets: McpToolset[],
    readonly oauth: McpOAuth,
  ) {
    this.byName = new Map(toolsets.map((t) => [t.namespace, t]));
  }

  list(org: string, connect: boolean): Promise<McpServerView[]> {
    return Promise.all([...this.byName.values()].map((t) => t.describe(org, { connect })));
  }

  get(org: string, name: string, connect: boolean): Promise<McpServerView> {
    return this.toolset(name).describe(org, { connect });
  }

  login(org: string, name: string): Promise<LoginStarted> {
    this.toolset(name);
    return this.oauth.login(org, name);
  }

  logout(org: string, name: string): Promise<{ removed: boolean; revoked: boolean }> {
    this.toolset(name);
    return this.oauth.logout(org, name);
  }

  private toolset(name: string): McpToolset {
    const t = this.byName.get(name);
    if (!t) {
      const known = [...this.byName.keys()];
      throw new WardrikError(
        "not_found",
        `No MCP server ${name} in config.yaml${known.length ? ` (its servers: ${known.join(", ")})` : " (it names none under mcp:)"}.`,
      );
    }
    return t;
  }
}
