import type { OAuthClientInformationMixed } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { GrantDocument } from "./grant-document.js";

/**
 * Token revocation (RFC 7009) at logout: the refresh token first (which
 * ends the whole grant at most servers), then the access token. True when
 * the authorization server took both; false when it offers no revocation
 * endpoint or refused. The MCP SDK's client has no revocation call, hence
 * this one.
 */
export async function revokeGrant(doc: GrantDocument, client: OAuthClientInformationMixed): Promise<boolean> {
  // OIDC discovery documents may lack it in the SDK's types; RFC 8414 metadata has it.
  const metadata = doc.discovery?.authorizationServerMetadata as { revocation_endpoint?: unknown } | undefined;
  const endpoint = typeof metadata?.revocation_endpoint === "string" ? metadata.revocation_endpoint : undefined;
  const tokens = doc.tokens;
  if (!endpoint || !tokens) return false;
  const revoke = async (token: string, hint: "refresh_token" | "access_token") => {
    const body = new URLSearchParams({ token, token_type_hint: hint, client_id: client.client_id });
    if (client.client_secret) body.set("client_secret", client.client_secret);
    const res = await fetch(endpoint, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body,
      signal: AbortSignal.timeout(10_000),
    });
    await res.body?.cancel().catch(() => undefined);
    return res.ok;
  };
  const refresh = tokens.refresh_token ? await revoke(tokens.refresh_token, "refresh_token") : true;
  const access = await revoke(tokens.access_token, "access_token");
  return refresh && access;
}
