/**
 * A real OAuth-protected MCP server on 127.0.0.1, made of the MCP SDK's own
 * server pieces: `McpServer` over `StreamableHTTPServerTransport`, behind the
 * SDK's `requireBearerAuth` (which answers 401 with
 * `WWW-Authenticate: Bearer resource_metadata=...` and checks each token's
 * audience, so a client that leaves out the `resource` parameter fails),
 * with the SDK's `mcpAuthRouter` as its authorization server (metadata,
 * dynamic registration, authorize, token with PKCE checks, revocation).
 *
 * Only the approval is automatic: `authorize` redirects straight back with
 * a code, as if a person had clicked "Allow". The test controls what a real
 * server does on its own: tokens that expire early, a grant revoked.
 */
import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import type { Response as ExpressResponse } from "express";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { OAuthRegisteredClientsStore } from "@modelcontextprotocol/sdk/server/auth/clients.js";
import { InvalidGrantError, InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import type { AuthorizationParams, OAuthServerProvider } from "@modelcontextprotocol/sdk/server/auth/provider.js";
import { getOAuthProtectedResourceMetadataUrl, mcpAuthRouter } from "@modelcontextprotocol/sdk/server/auth/router.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { OAuthClientInformationFull, OAuthTokenRevocationRequest, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { z } from "zod";

export interface OAuthMcpServerStats {
  registrations: number;
  authorizations: number;
  codeExchanges: number;
  refreshes: number;
  refusedRefreshes: number;
  revocations: number;
  /** Requests to /mcp answered 401. */
  unauthorized: number;
  /** Tool calls served. */
  calls: number;
}

export interface OAuthMcpServer {
  /** The MCP endpoint. */
  url: string;
  stats: OAuthMcpServerStats;
  /** `resource` parameters received by authorize and token. */
  resources: string[];
  /** Seconds an access token lives (set before it is issued). */
  accessTtlSeconds: number;
  /** Every secret value handed out: access and refresh tokens, client secrets, codes. */
  issued(): string[];
  /** The server forgets every access token it issued, as if they all expired early; refresh tokens still work. */
  expireAccessTokens(): void;
  /** Revokes every access and refresh token: the grant is gone. */
  revokeAll(): void;
  /**
   * A client registered by hand, as a service's developer settings do: its ID
   * and secret go in config.yaml. `redirectUris` is read when a login asks, so
   * it may be filled in once the daemon's address is known.
   */
  preregister(redirectUris: string[]): { clientId: string; clientSecret: string };
  /** Plays the browser: opens the authorization URL and follows the redirect back to the daemon's callback. */
  approve(authorizationUrl: string): Promise<{ status: number; text: string }>;
  close(): Promise<void>;
}

interface Grant {
  clientId: string;
  scopes: string[];
  resource?: URL;
}

export async function startOAuthMcpServer(options: { accessTtlSeconds?: number } = {}): Promise<OAuthMcpServer> {
  const app = express();
  const http: Server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const mcpUrl = new URL("/mcp", base);
  const stats: OAuthMcpServerStats = {
    registrations: 0,
    authorizations: 0,
    codeExchanges: 0,
    refreshes: 0,
    refusedRefreshes: 0,
    revocations: 0,
    unauthorized: 0,
    calls: 0,
  };
  const resources: string[] = [];
  const issued: string[] = [];
  const clients = new Map<string, OAuthClientInformationFull>();
  const codes = new Map<string, { clientId: string; params: AuthorizationParams }>();
  const access = new Map<string, Grant & { expiresAt: number }>();
  const refresh = new Map<string, Grant>();
  const secret = (prefix: string) => {
    const s = `${prefix}_${randomBytes(18).toString("base64url")}`;
    issued.push(s);
    return s;
  };
  const server: OAuthMcpServer = {
    url: mcpUrl.href,
    stats,
    resources,
    accessTtlSeconds: options.accessTtlSeconds ?? 3600,
    issued: () => [...issued],
    expireAccessTokens: () => access.clear(),
    preregister: (redirectUris) => {
      const clientId = `client_${randomBytes(9).toString("base64url")}`;
      const clientSecret = secret("cs");
      clients.set(clientId, {
        client_id: clientId,
        client_secret: clientSecret,
        token_endpoint_auth_method: "client_secret_post",
        // The same array: the caller may add the daemon's callback once it listens.
        redirect_uris: redirectUris,
      } as OAuthClientInformationFull);
      return { clientId, clientSecret };
    },
    revokeAll: () => {
      access.clear();
      refresh.clear();
    },
    approve: async (authorizationUrl) => {
      const asked = await fetch(authorizationUrl, { redirect: "manual" });
      const back = asked.headers.get("location");
      if (!back) throw new Error(`authorize answered ${asked.status} without a redirect: ${await asked.text()}`);
      const res = await fetch(back);
      return { status: res.status, text: await res.text() };
    },
    close: () => new Promise((resolve) => http.close(() => resolve())),
  };

  const tokensFor = (grant: Grant): OAuthTokens => {
    const accessToken = secret("at");
    const refreshToken = secret("rt");
    access.set(accessToken, { ...grant, expiresAt: Date.now() + server.accessTtlSeconds * 1000 });
    refresh.set(refreshToken, grant);
    return {
      access_token: accessToken,
      token_type: "bearer",
      expires_in: server.accessTtlSeconds,
      refresh_token: refreshToken,
      scope: grant.scopes.join(" "),
    };
  };

  const clientsStore: OAuthRegisteredClientsStore = {
    getClient: (id) => clients.get(id),
    registerClient: (client) => {
      stats.registrations += 1;
      const full = { ...client, client_id: secret("client") } as OAuthClientInformationFull;
      clients.set(full.client_id, full);
      return full;
    },
  };
  const provider: OAuthServerProvider = {
    clientsStore,
    authorize: async (client: OAuthClientInformationFull, params: AuthorizationParams, res: ExpressResponse) => {
      stats.authorizations += 1;
      if (params.resource) resources.push(params.resource.href);
      const code = secret("code");
      codes.set(code, { clientId: client.client_id, params });
      const back = new URL(params.redirectUri);
      back.searchParams.set("code", code);
      if (params.state !== undefined) back.searchParams.set("state", params.state);
      res.redirect(back.href);
    },
    challengeForAuthorizationCode: async (_client, code) => {
      const c = codes.get(code);
      if (!c) throw new InvalidGrantError("unknown authorization code");
      return c.params.codeChallenge;
    },
    exchangeAuthorizationCode: async (client, code, _verifier, _redirectUri, resource) => {
      const c = codes.get(code);
      if (!c || c.clientId !== client.client_id) throw new InvalidGrantError("unknown authorization code");
      codes.delete(code);
      stats.codeExchanges += 1;
      if (resource) resources.push(resource.href);
      return tokensFor({ clientId: client.client_id, scopes: c.params.scopes ?? [], ...(resource ? { resource } : {}) });
    },
    exchangeRefreshToken: async (client, refreshToken, _scopes, resource) => {
      const g = refresh.get(refreshToken);
      if (!g || g.clientId !== client.client_id) {
        stats.refusedRefreshes += 1;
        throw new InvalidGrantError("the refresh token is not valid (revoked or unknown)");
      }
      // Rotation: each refresh token works once.
      refresh.delete(refreshToken);
      stats.refreshes += 1;
      if (resource) resources.push(resource.href);
      return tokensFor(g);
    },
    verifyAccessToken: async (token): Promise<AuthInfo> => {
      const g = access.get(token);
      if (!g || g.expiresAt < Date.now()) throw new InvalidTokenError("the access token is not valid (expired, revoked or unknown)");
      return {
        token,
        clientId: g.clientId,
        scopes: g.scopes,
        expiresAt: Math.floor(g.expiresAt / 1000),
        ...(g.resource ? { resource: g.resource } : {}),
      };
    },
    revokeToken: async (_client, request: OAuthTokenRevocationRequest) => {
      stats.revocations += 1;
      access.delete(request.token);
      refresh.delete(request.token);
    },
  };

  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl: new URL(base),
      resourceServerUrl: mcpUrl,
      scopesSupported: ["notes"],
      resourceName: "Wardrik test notes",
      authorizationOptions: { rateLimit: false },
      clientRegistrationOptions: { rateLimit: false },
      tokenOptions: { rateLimit: false },
      revocationOptions: { rateLimit: false },
    }),
  );
  const bearer = requireBearerAuth({
    verifier: provider,
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
    expectedResource: mcpUrl,
  });
  app.use("/mcp", (req, res, next) => {
    res.on("finish", () => {
      if (res.statusCode === 401) stats.unauthorized += 1;
    });
    next();
  });
  // Stateless, like many hosted servers: no stream to GET, no session to DELETE.
  app.get("/mcp", bearer, (_req, res) => void res.status(405).set("allow", "POST").end());
  app.delete("/mcp", bearer, (_req, res) => void res.status(405).set("allow", "POST").end());
  app.post("/mcp", bearer, express.json(), async (req, res) => {
    // Stateless: a server and a transport per request.
    const mcp = new McpServer({ name: "oauth-notes", version: "1.0.0" });
    mcp.registerTool(
      "echo",
      {
        description: "Echoes the text, with the client it was called for.",
        inputSchema: { text: z.string() },
        annotations: { readOnlyHint: true },
      },
      async ({ text }, extra) => {
        stats.calls += 1;
        return { content: [{ type: "text", text: `secure echo: ${text} (for ${extra.authInfo ? "a logged-in client" : "nobody"})` }] };
      },
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  return server;
}
