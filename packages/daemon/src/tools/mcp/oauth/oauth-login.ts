import { randomBytes, timingSafeEqual } from "node:crypto";
import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { WardrikError } from "@wardrik/protocol";
import { loadMcpClientSdk } from "../load-mcp-client-sdk.js";
import { storeTokens, type GrantDocument } from "./grant-document.js";
import type { McpOAuthSession } from "./oauth-session.js";
import { revokeGrant } from "./revoke-grant.js";

/** How long the authorization URL of `wardrik mcp login` can be used. */
export const LOGIN_TTL_MS = 10 * 60_000;

export interface LoginStarted {
  authorization_url: string;
  redirect_url: string;
  expires_at: string;
}

/**
 * `wardrik mcp login`: the authorization-code flow with PKCE, as the MCP
 * authorization spec describes it, through the SDK's `auth()`: protected
 * resource metadata (RFC 9728), authorization server metadata (RFC 8414),
 * dynamic client registration (RFC 7591) unless config.yaml names a
 * client_id, the `resource` parameter (RFC 8707). The browser comes back to
 * `/v1/oauth/callback`, whose code `finishLogin` exchanges. What a login in
 * progress needs (the PKCE verifier, the state) waits in the vault, so any
 * daemon of a cluster can finish it, and a restart does not lose it.
 */
export async function startLogin(session: McpOAuthSession, redirectUrl: string, now: number): Promise<LoginStarted> {
  const doc: GrantDocument = { ...((await session.reload()) ?? {}) };
  const state = `${session.org}.${session.name}.${randomBytes(18).toString("base64url")}`;
  let verifier = "";
  let authorizationUrl: URL | undefined;
  const provider = clientProvider(session, doc, redirectUrl, {
    state: () => state,
    // A login asks a person again, whatever is stored: no refresh instead, and fresh discovery.
    tokens: () => undefined,
    discoveryState: () => undefined,
    saveCodeVerifier: (v) => void (verifier = v),
    codeVerifier: () => verifier,
    redirectToAuthorization: (url) => void (authorizationUrl = url),
  });
  const entry = session.server.entry;
  const challenge = session.server.challenge;
  try {
    const { auth } = await loadMcpClientSdk(`MCP server "${session.name}"`);
    const result = await auth(provider, {
      serverUrl: entry.url,
      ...(challenge?.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {}),
      ...((entry.oauth?.scope ?? challenge?.scope) ? { scope: entry.oauth?.scope ?? challenge?.scope } : {}),
    });
    if (result !== "REDIRECT" || !authorizationUrl) throw new Error("the authorization server gave no authorization URL");
  } catch (err) {
    throw new WardrikError(
      "unavailable",
      `Cannot start the login to MCP server "${session.name}": ${describeOAuthFailure(err, session.name)}`,
      {
        retryable: true,
      },
    );
  }
  const expiresAt = now + LOGIN_TTL_MS;
  const { login_error: _old, ...rest } = doc;
  await session.save({ ...rest, pending: { state, verifier, redirect_url: redirectUrl, expires_at: expiresAt } });
  return { authorization_url: authorizationUrl.href, redirect_url: redirectUrl, expires_at: new Date(expiresAt).toISOString() };
}

/** The callback: checks the state against the login in progress and exchanges the code for tokens. */
export async function finishLogin(session: McpOAuthSession, state: string, code: string, now: number): Promise<void> {
  const doc: GrantDocument = { ...((await session.reload()) ?? {}) };
  const pending = checkPending(session, doc, state, now);
  let tokens: OAuthTokens | undefined;
  const provider = clientProvider(session, doc, pending.redirect_url, {
    tokens: () => undefined,
    saveTokens: (t) => void (tokens = t),
    codeVerifier: () => pending.verifier,
    saveCodeVerifier: () => undefined,
    redirectToAuthorization: () => undefined,
    discoveryState: () => doc.discovery,
  });
  try {
    const { auth } = await loadMcpClientSdk(`MCP server "${session.name}"`);
    const result = await auth(provider, { serverUrl: session.server.entry.url, authorizationCode: code });
    if (result !== "AUTHORIZED" || !tokens) throw new Error("the authorization server gave no tokens");
  } catch (err) {
    const why = describeOAuthFailure(err, session.name);
    await failLogin(session, state, `exchanging the authorization code failed: ${why}`);
    throw new WardrikError("bad_request", `The login to MCP server "${session.name}" failed: ${why}`);
  }
  const { pending: _done, refused: _old, login_error: _err, ...rest } = doc;
  await session.save({ ...rest, tokens: storeTokens(tokens, now), authorized_at: new Date(now).toISOString() });
  session.problem = undefined;
}

/** The authorization server sent the browser back with an error (the person refused, say). */
export async function failLogin(session: McpOAuthSession, state: string, why: string): Promise<void> {
  const doc = await session.reload();
  if (!doc?.pending || !sameText(doc.pending.state, state)) return;
  const { pending: _gone, ...rest } = doc;
  await session.save({ ...rest, login_error: why });
}

/** `wardrik mcp logout`: revokes the tokens where the server allows it, then removes the grant. */
export async function logout(session: McpOAuthSession): Promise<{ removed: boolean; revoked: boolean }> {
  const doc = await session.reload();
  let revoked = false;
  if (doc?.tokens) {
    const client = session.clientInformation(doc);
    revoked = client ? await revokeGrant(doc, client).catch(() => false) : false;
  }
  return { removed: await session.remove(), revoked };
}

function checkPending(session: McpOAuthSession, doc: GrantDocument, state: string, now: number) {
  const pending = doc.pending;
  const again = `run ${session.loginCommand()} again`;
  if (!pending || !sameText(pending.state, state)) {
    throw new WardrikError("bad_request", `This is not the latest login link of MCP server "${session.name}"; ${again}.`);
  }
  if (pending.expires_at < now) throw new WardrikError("bad_request", `The login to MCP server "${session.name}" expired; ${again}.`);
  return pending;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

type Overrides = Partial<OAuthClientProvider> &
  Pick<OAuthClientProvider, "tokens" | "codeVerifier" | "saveCodeVerifier" | "redirectToAuthorization" | "discoveryState">;

/** The SDK's view of this daemon as an OAuth client, writing what it learns into `doc`. */
function clientProvider(session: McpOAuthSession, doc: GrantDocument, redirectUrl: string, o: Overrides): OAuthClientProvider {
  const configured = session.server.entry.oauth?.client_id !== undefined;
  return {
    redirectUrl,
    clientMetadata: clientMetadata(session, redirectUrl),
    clientInformation: () => {
      const info = session.clientInformation(doc);
      // A registration made for another callback address (the daemon moved) cannot come back here.
      return configured || !info || registeredFor(info, redirectUrl) ? info : undefined;
    },
    ...(configured ? {} : { saveClientInformation: (info: OAuthClientInformationMixed) => void (doc.client = info) }),
    saveTokens: () => undefined,
    saveDiscoveryState: (d: OAuthDiscoveryState) => void (doc.discovery = d),
    invalidateCredentials: (scope) => {
      if ((scope === "all" || scope === "client") && !configured) delete doc.client;
      if (scope === "all" || scope === "tokens") delete doc.tokens;
      if (scope === "all" || scope === "discovery") delete doc.discovery;
    },
    ...o,
  };
}

function clientMetadata(session: McpOAuthSession, redirectUrl: string): OAuthClientMetadata {
  const o = session.server.entry.oauth;
  return {
    client_name: "Wardrik",
    redirect_uris: [redirectUrl],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: o?.client_secret ? "client_secret_post" : "none",
    ...(o?.scope ? { scope: o.scope } : {}),
  };
}

function registeredFor(info: OAuthClientInformationMixed, redirectUrl: string): boolean {
  const uris = (info as { redirect_uris?: unknown }).redirect_uris;
  return !Array.isArray(uris) || uris.includes(redirectUrl);
}

/** An OAuth failure in words a person can act on. */
export function describeOAuthFailure(err: unknown, server: string): string {
  const message = err instanceof Error ? err.message : String(err);
  if (/does not support dynamic client registration/.test(message)) {
    return `its authorization server does not register clients by itself; register one there and set mcp.${server}.oauth.client_id (and client_secret) in config.yaml`;
  }
  const code = (err as { errorCode?: unknown }).errorCode;
  return typeof code === "string" && code !== "" ? `${code}${message ? ` (${message})` : ""}` : message;
}
