import type { OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";

/** Tokens as kept: the token response plus when it expires, in epoch milliseconds. */
export interface StoredTokens extends OAuthTokens {
  expires_at?: number;
}

/** A login started by `wardrik mcp login` and not finished yet. */
export interface PendingLogin {
  /** The OAuth `state`: `ORG.SERVER.RANDOM`, so the callback finds the grant. */
  state: string;
  /** The PKCE code verifier of this login. */
  verifier: string;
  redirect_url: string;
  /** Epoch milliseconds. */
  expires_at: number;
}

/**
 * What the vault holds for one org's use of one MCP server (one sealed JSON
 * document, see store/mcp-grants.ts). Secret parts: the tokens, the client's
 * secret, the code verifier.
 */
export interface GrantDocument {
  /** The client this daemon registered dynamically (absent when config.yaml gives a client_id). */
  client?: OAuthClientInformationMixed;
  tokens?: StoredTokens;
  /** Where the authorization server and its endpoints are, found at login. */
  discovery?: OAuthDiscoveryState;
  pending?: PendingLogin;
  /** Why the last login did not finish, for `wardrik mcp login` waiting on it. */
  login_error?: string;
  /** Why the server stopped accepting this grant (its tokens were dropped): a new login is needed. */
  refused?: string;
  /** When the last login finished (ISO time). */
  authorized_at?: string;
}

export function parseGrant(text: string): GrantDocument {
  const value = JSON.parse(text) as unknown;
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as GrantDocument) : {};
}

/** The values of a grant that must never show: every one is blanked from logs, events and messages. */
export function grantSecrets(doc: GrantDocument): string[] {
  const out: string[] = [];
  if (doc.tokens) {
    out.push(doc.tokens.access_token);
    if (doc.tokens.refresh_token) out.push(doc.tokens.refresh_token);
    if (doc.tokens.id_token) out.push(doc.tokens.id_token);
  }
  if (doc.client?.client_secret) out.push(doc.client.client_secret);
  if (doc.pending) out.push(doc.pending.verifier);
  return out;
}

/** Token response -> stored tokens, with the expiry made absolute. */
export function storeTokens(tokens: OAuthTokens, now: number): StoredTokens {
  return { ...tokens, ...(tokens.expires_in !== undefined ? { expires_at: now + tokens.expires_in * 1000 } : {}) };
}
