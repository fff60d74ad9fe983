import type { OAuthClientInformationMixed } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpGrantStore } from "../../../store/mcp-grants.js";
import type { Logger } from "../../../log/logger.js";
import type { SecretRedactor } from "../../../secrets/redactor.js";
import { loadMcpClientSdk, loadedMcpClientSdk } from "../load-mcp-client-sdk.js";
import { grantSecrets, parseGrant, storeTokens, type GrantDocument } from "./grant-document.js";
import type { ServerAuth } from "./server-auth.js";

/** An access token with less than this left is refreshed before it is sent. */
export const REFRESH_MARGIN_MS = 60_000;

export type AuthState = "authorized" | "login_needed" | "not_required" | "unknown";

export interface OAuthContext {
  grants: McpGrantStore;
  redactor: SecretRedactor;
  log: Logger;
  /** The org of config.yaml's agents: commands printed for other orgs add `--org ORG`. */
  homeOrg: string;
  /** The daemon's `/v1/oauth/callback` as a browser reaches it (known once the daemon listens). */
  callbackUrl(server: string): string;
  now(): number;
  /** A login finished or a logout happened: the org's connection must start over with the new credentials. */
  changed(org: string, server: string): void;
}

/**
 * One org's OAuth grant for one remote MCP server, as the daemon uses it
 * without a person: it puts the access token on every request, refreshes it
 * shortly before it expires and once after the server answers 401, and,
 * when the authorization server refuses the grant, drops its tokens and says
 * a new login is needed. Logging in and out is oauth-login.ts.
 */
export class McpOAuthSession {
  private refreshing: Promise<string | undefined> | undefined;
  /** Why the last refresh failed without a refusal (the authorization server could not be reached), for messages. */
  problem: string | undefined;

  constructor(
    readonly org: string,
    readonly server: ServerAuth,
    private readonly ctx: OAuthContext,
    /** The grant as last read from or written to the vault. */
    private doc: GrantDocument | undefined,
  ) {}

  get name(): string {
    return this.server.name;
  }

  get grant(): GrantDocument | undefined {
    return this.doc;
  }

  state(): AuthState {
    if (this.doc?.tokens) return "authorized";
    if (this.server.requiresLogin === true || this.doc?.refused) return "login_needed";
    return this.server.requiresLogin === false ? "not_required" : "unknown";
  }

  /** True when connecting is pointless: a login is needed and there is no token to try. */
  blocked(): boolean {
    return this.state() === "login_needed";
  }

  /** The command that logs this org in, as a person types it. */
  loginCommand(): string {
    return `wardrik mcp login ${this.name}${this.org === this.ctx.homeOrg ? "" : ` --org ${this.org}`}`;
  }

  /** Why calls cannot run, and what to do, in one sentence. */
  loginNeededMessage(): string {
    const why = this.doc?.refused ? ` (${this.doc.refused})` : "";
    return `MCP server "${this.name}" needs a login for org ${this.org}${why}: run ${this.loginCommand()}`;
  }

  /** The client this daemon is to the server's authorization server: config.yaml's, or the one it registered. */
  clientInformation(doc = this.doc): OAuthClientInformationMixed | undefined {
    const o = this.server.entry.oauth;
    if (o?.client_id) return { client_id: o.client_id, ...(o.client_secret ? { client_secret: o.client_secret } : {}) };
    return doc?.client;
  }

  // ---- the vault ----

  /** Rereads the grant (another daemon of a cluster may have refreshed it). */
  async reload(): Promise<GrantDocument | undefined> {
    const text = await this.ctx.grants.get(this.org, this.name);
    this.doc = text === undefined ? undefined : parseGrant(text);
    if (this.doc) for (const s of grantSecrets(this.doc)) this.ctx.redactor.add(s, undefined, this.org);
    return this.doc;
  }

  async save(doc: GrantDocument): Promise<void> {
    // Blanked before anything could log them.
    for (const s of grantSecrets(doc)) this.ctx.redactor.add(s, undefined, this.org);
    await this.ctx.grants.put(this.org, this.name, JSON.stringify(doc));
    this.doc = doc;
  }

  async remove(): Promise<boolean> {
    const removed = await this.ctx.grants.remove(this.org, this.name);
    this.doc = undefined;
    return removed;
  }

  // ---- tokens ----

  /** The access token to send, refreshed first when it is about to expire; undefined without a grant. */
  async accessToken(): Promise<string | undefined> {
    const t = this.doc?.tokens;
    if (!t) return undefined;
    if (t.refresh_token && t.expires_at !== undefined && t.expires_at - this.ctx.now() < REFRESH_MARGIN_MS) {
      // A failed refresh that was not a refusal keeps the old token: it may still be accepted.
      return (await this.refresh(t.access_token)) ?? this.doc?.tokens?.access_token;
    }
    return t.access_token;
  }

  /**
   * Gets a new access token with the refresh token, once for any number of
   * callers. `stale`: the token found wanting; when the vault already holds
   * another one (refreshed elsewhere), that one is used.
   */
  refresh(stale: string): Promise<string | undefined> {
    return (this.refreshing ??= this.doRefresh(stale).finally(() => (this.refreshing = undefined)));
  }

  private async doRefresh(stale: string): Promise<string | undefined> {
    const doc = await this.reload();
    const t = doc?.tokens;
    if (!doc || !t) return undefined;
    if (t.access_token !== stale && (t.expires_at === undefined || t.expires_at - this.ctx.now() >= REFRESH_MARGIN_MS))
      return t.access_token;
    const client = this.clientInformation(doc);
    if (!t.refresh_token || !client) {
      await this.refuse(doc, "the access token expired and the grant has no refresh token");
      return undefined;
    }
    try {
      const { discoverOAuthServerInfo, refreshAuthorization } = await loadMcpClientSdk(`MCP server "${this.name}"`);
      const info = doc.discovery?.authorizationServerUrl ? doc.discovery : await discoverOAuthServerInfo(this.server.entry.url);
      const resource = info.resourceMetadata?.resource;
      const fresh = await refreshAuthorization(info.authorizationServerUrl, {
        ...(info.authorizationServerMetadata ? { metadata: info.authorizationServerMetadata } : {}),
        clientInformation: client,
        refreshToken: t.refresh_token,
        ...(resource ? { resource: new URL(resource) } : {}),
      });
      await this.save({ ...doc, tokens: { ...storeTokens(fresh, this.ctx.now()), ...(t.issuer ? { issuer: t.issuer } : {}) } });
      this.problem = undefined;
      this.ctx.log("info", "MCP server's OAuth token refreshed", { server: this.name, org: this.org });
      return fresh.access_token;
    } catch (err) {
      const sdk = loadedMcpClientSdk();
      if (sdk && err instanceof sdk.OAuthError && !(err instanceof sdk.ServerError)) {
        // Another daemon of a cluster may have used this refresh token a moment ago (it works once): its tokens win.
        const now = await this.reload();
        if (now?.tokens && now.tokens.refresh_token !== t.refresh_token) return now.tokens.access_token;
        await this.refuse(
          doc,
          `the authorization server refused the stored grant: ${err.errorCode}${err.message ? ` (${err.message})` : ""}`,
        );
        return undefined;
      }
      // The authorization server is down or confused: the grant stays; the next use tries again.
      const detail = this.ctx.redactor.forOrg(this.org).redact(err instanceof Error ? err.message : String(err));
      this.problem = `its OAuth token could not be refreshed: ${detail}`;
      this.ctx.log("warn", "MCP server's OAuth token could not be refreshed", { server: this.name, org: this.org, err: detail });
      return undefined;
    }
  }

  /** The grant no longer works: its tokens go (the client registration stays), and a new login is needed. */
  async refuse(doc: GrantDocument, why: string): Promise<void> {
    const { tokens: _dropped, ...rest } = doc;
    await this.save({ ...rest, refused: why });
    // The live connection stays: its next request is refused, and that call says a login is needed.
    this.ctx.log("warn", "MCP server needs a new login", { server: this.name, org: this.org, why });
  }

  /**
   * `fetch` for the MCP transport: adds the bearer token; on a 401 notes the
   * server's challenge and, with a grant, refreshes once and tries again.
   * A 401 that stays is passed on: the caller asks `blocked()` why.
   */
  readonly fetch: FetchLike = async (url, init) => {
    const token = await this.accessToken();
    const res = await fetch(url, withBearer(init, token));
    if (res.status !== 401) return res;
    await this.server.noteUnauthorized(res);
    if (!token) return res;
    const fresh = await this.refresh(token);
    // Refused (a login is needed) or not refreshed (`problem` says why): the 401 stands.
    if (!fresh) return res;
    await res.body?.cancel().catch(() => undefined);
    const again = await fetch(url, withBearer(init, fresh));
    if (again.status === 401 && this.doc) await this.refuse(this.doc, "the server refused a token that was just refreshed");
    return again;
  };
}

function withBearer(init: RequestInit | undefined, token: string | undefined): RequestInit {
  const headers = new Headers(init?.headers);
  if (token) headers.set("authorization", `Bearer ${token}`);
  return { ...init, headers };
}
