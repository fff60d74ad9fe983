import { WardrikError } from "@wardrik/protocol";
import type { McpServerEntry } from "../../../config/types.js";
import type { Logger } from "../../../log/logger.js";
import type { SecretRedactor } from "../../../secrets/redactor.js";
import type { McpGrantStore } from "../../../store/mcp-grants.js";
import { grantSecrets, parseGrant, type GrantDocument } from "./grant-document.js";
import { failLogin, finishLogin, logout, startLogin, type LoginStarted } from "./oauth-login.js";
import { McpOAuthSession, type OAuthContext } from "./oauth-session.js";
import { ServerAuth } from "./server-auth.js";

export const OAUTH_CALLBACK_PATH = "/v1/oauth/callback";

export interface McpOAuthOptions {
  grants: McpGrantStore;
  redactor: SecretRedactor;
  log: Logger;
  /** config.yaml's org. */
  homeOrg: string;
  servers: Record<string, McpServerEntry>;
  now?: () => number;
}

/** Whether a server may log in with OAuth: reached by URL, and config.yaml gives it no Authorization header. */
export function mayUseOAuth(entry: McpServerEntry): entry is McpServerEntry & { url: string } {
  return entry.url !== undefined && !Object.keys(entry.headers ?? {}).some((h) => h.toLowerCase() === "authorization");
}

/**
 * The OAuth side of the daemon's MCP clients: per remote server what it
 * asks for, per org and server the grant (sessions), and the three things a
 * person does: log in, come back from the browser, log out.
 */
export class McpOAuth {
  private readonly servers = new Map<string, ServerAuth>();
  private readonly sessions = new Map<string, McpOAuthSession>();
  private readonly listeners = new Set<(org: string, server: string) => void>();
  private daemonUrl = "http://127.0.0.1";
  private readonly ctx: OAuthContext;

  constructor(private readonly o: McpOAuthOptions) {
    for (const [name, entry] of Object.entries(o.servers)) if (mayUseOAuth(entry)) this.servers.set(name, new ServerAuth(name, entry));
    this.ctx = {
      grants: o.grants,
      redactor: o.redactor,
      log: o.log,
      homeOrg: o.homeOrg,
      now: o.now ?? Date.now,
      callbackUrl: (server) => this.callbackUrl(server),
      changed: (org, server) => this.changed(org, server),
    };
  }

  /**
   * Reads every stored grant once at start: their tokens join the redactor
   * (blanked in the log and in that org's view), and sessions know their state
   * without a database read.
   */
  async load(): Promise<void> {
    const { grants, unreadable } = await this.o.grants.everything();
    for (const g of grants) {
      let doc: GrantDocument;
      try {
        doc = parseGrant(g.document);
      } catch {
        this.o.log("warn", "a stored MCP grant is not valid JSON; log in again", { org: g.org, server: g.server });
        continue;
      }
      for (const s of grantSecrets(doc)) this.o.redactor.add(s, undefined, g.org);
      const server = this.servers.get(g.server);
      if (server) this.sessions.set(key(g.org, g.server), new McpOAuthSession(g.org, server, this.ctx, doc));
    }
    for (const u of unreadable) this.o.log("warn", "a stored MCP grant cannot be decrypted; log in again", { ...u });
  }

  /** Where the daemon listens, once it does: the default callback address follows it. */
  setDaemonUrl(url: string): void {
    this.daemonUrl = url.replace(/\/+$/, "").replace("//0.0.0.0", "//127.0.0.1").replace("//[::]", "//127.0.0.1");
  }

  callbackUrl(server: string): string {
    return this.servers.get(server)?.entry.oauth?.redirect_url ?? this.daemonUrl + OAUTH_CALLBACK_PATH;
  }

  /** The org's session with a server that may log in with OAuth; undefined for any other server. */
  session(org: string, server: string): McpOAuthSession | undefined {
    const auth = this.servers.get(server);
    if (!auth) return undefined;
    let s = this.sessions.get(key(org, server));
    if (!s) this.sessions.set(key(org, server), (s = new McpOAuthSession(org, auth, this.ctx, undefined)));
    return s;
  }

  serverAuth(server: string): ServerAuth | undefined {
    return this.servers.get(server);
  }

  /** Tells `listener` when an org logged in to a server or out of it. */
  onChange(listener: (org: string, server: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Asks every server that has not said yet whether it wants a login (in the background at start). */
  probeUnknown(): Promise<void> {
    return Promise.all([...this.servers.values()].filter((s) => s.requiresLogin === undefined).map((s) => s.probe())).then(() => undefined);
  }

  async login(org: string, server: string): Promise<LoginStarted> {
    const session = this.session(org, server);
    if (!session)
      throw new WardrikError(
        "bad_request",
        `MCP server "${server}" logs in without OAuth (it is a stdio server or config.yaml gives it an Authorization header); there is nothing to log in to.`,
      );
    if (session.server.requiresLogin === undefined) await session.server.probe();
    if (session.server.requiresLogin === false) {
      throw new WardrikError("conflict", `MCP server "${server}" answers without a login; there is nothing to log in to.`);
    }
    return startLogin(session, this.callbackUrl(server), this.ctx.now());
  }

  /**
   * The browser came back (`GET /v1/oauth/callback`). The `state` names the
   * org and server (`ORG.SERVER.RANDOM`); it must be the login in progress.
   */
  async callback(q: {
    state?: string;
    code?: string;
    error?: string;
    error_description?: string;
  }): Promise<{ org: string; server: string }> {
    const [org, server] = (q.state ?? "").split(".");
    const session = org && server ? this.session(org, server) : undefined;
    if (!session || !q.state)
      throw new WardrikError("bad_request", "This is not a Wardrik login link (its state names no MCP server of this daemon).");
    if (q.error !== undefined) {
      const why = `the authorization server answered ${q.error}${q.error_description ? `: ${q.error_description}` : ""}`;
      await failLogin(session, q.state, why);
      throw new WardrikError("bad_request", `The login to MCP server "${server}" did not finish: ${why}.`);
    }
    if (!q.code) throw new WardrikError("bad_request", "The authorization server sent no code.");
    await finishLogin(session, q.state, q.code, this.ctx.now());
    this.o.log("info", "MCP server logged in", { server, org });
    this.changed(org!, server!);
    return { org: org!, server: server! };
  }

  async logout(org: string, server: string): Promise<{ removed: boolean; revoked: boolean }> {
    const session = this.session(org, server);
    if (!session)
      throw new WardrikError("bad_request", `MCP server "${server}" does not log in with OAuth; there is nothing to log out of.`);
    const result = await logout(session);
    this.o.log("info", "MCP server logged out", { server, org, ...result });
    this.changed(org, server);
    return result;
  }

  private changed(org: string, server: string): void {
    for (const l of this.listeners) l(org, server);
  }
}

function key(org: string, server: string): string {
  return `${org}\u0000${server}`;
}
