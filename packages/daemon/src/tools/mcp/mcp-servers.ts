import { WardrikError } from "@wardrik/protocol";
import type { McpToolset, McpServerView } from "./mcp-toolset.js";
import type { McpOAuth } from "./oauth/mcp-oauth.js";
import type { LoginStarted } from "./oauth/oauth-login.js";

/**
 * The MCP servers of config.yaml as people manage them: `wardrik mcp ls|login|logout`
 * and the OAuth callback. An org sees only the servers it may use; any other
 * is answered as a server config.yaml does not have.
 */
export class McpServers {
  private readonly byName: Map<string, McpToolset>;

  constructor(
    toolsets: McpToolset[],
    readonly oauth: McpOAuth,
  ) {
    this.byName = new Map(toolsets.map((t) => [t.namespace, t]));
  }

  list(org: string, connect: boolean): Promise<McpServerView[]> {
    return Promise.all(this.of(org).map((t) => t.describe(org, { connect })));
  }

  get(org: string, name: string, connect: boolean): Promise<McpServerView> {
    return this.toolset(org, name).describe(org, { connect });
  }

  login(org: string, name: string): Promise<LoginStarted> {
    this.toolset(org, name);
    return this.oauth.login(org, name);
  }

  logout(org: string, name: string): Promise<{ removed: boolean; revoked: boolean }> {
    this.toolset(org, name);
    return this.oauth.logout(org, name);
  }

  private of(org: string): McpToolset[] {
    return [...this.byName.values()].filter((t) => t.offeredTo(org));
  }

  private toolset(org: string, name: string): McpToolset {
    const t = this.byName.get(name);
    if (!t || !t.offeredTo(org)) {
      const known = this.of(org).map((s) => s.namespace);
      throw new WardrikError(
        "not_found",
        `No MCP server ${name} in config.yaml${known.length ? ` (its servers: ${known.join(", ")})` : " (it names none under mcp:)"}.`,
      );
    }
    return t;
  }
}
