/**
 * Two daemons of a cluster refresh the same grant at once. The authorization
 * server rotates refresh tokens (each works once), so one of them is refused.
 * The refused one must take the winner's tokens from the vault, not throw the
 * grant away. Real parts: the vault on a real database, the SDK's own
 * authorization server; the interleaving is forced by holding the slower
 * daemon's read of the vault until the faster one has refreshed.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log/logger.js";
import { SecretRedactor } from "../../src/secrets/redactor.js";
import type { Db } from "../../src/store/db.js";
import { McpGrantStore } from "../../src/store/mcp-grants.js";
import { openDb } from "../../src/store/open-db.js";
import { SecretStore } from "../../src/store/secrets.js";
import { parseGrant, storeTokens } from "../../src/tools/mcp/oauth/grant-document.js";
import { McpOAuthSession, type OAuthContext } from "../../src/tools/mcp/oauth/oauth-session.js";
import { ServerAuth } from "../../src/tools/mcp/oauth/server-auth.js";
import { createTestDatabase } from "../helpers/test-database.js";
import { startOAuthMcpServer, type OAuthMcpServer } from "./oauth/oauth-mcp-server.js";

const REDIRECT = "http://127.0.0.1:9/v1/oauth/callback";
const KEY = { WARDRIK_SECRET_KEY: Buffer.alloc(32, 7).toString("base64") };

/** A vault whose first read is answered only once `gate` opens (with what it read before: a daemon that read, then stalled). */
class StalledVault extends McpGrantStore {
  private first = true;
  constructor(
    db: Db,
    secrets: SecretStore,
    private readonly gate: Promise<void>,
  ) {
    super(db, secrets);
  }
  override async get(org: string, server: string): Promise<string | undefined> {
    const read = await super.get(org, server);
    if (this.first) {
      this.first = false;
      await this.gate;
    }
    return read;
  }
}

/** A grant as a finished login leaves it: PKCE authorization and code exchange against the test server. */
async function login(server: OAuthMcpServer, client: { clientId: string; clientSecret: string }) {
  const base = new URL(server.url).origin;
  const verifier = randomBytes(32).toString("base64url");
  const authorize = new URL("/authorize", base);
  authorize.search = new URLSearchParams({
    response_type: "code",
    client_id: client.clientId,
    redirect_uri: REDIRECT,
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
    resource: server.url,
    state: "s",
  }).toString();
  const back = (await fetch(authorize, { redirect: "manual" })).headers.get("location");
  const code = new URL(back!).searchParams.get("code")!;
  const res = await fetch(new URL("/token", base), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      client_id: client.clientId,
      client_secret: client.clientSecret,
      resource: server.url,
    }),
  });
  expect(res.status).toBe(200);
  return storeTokens((await res.json()) as { access_token: string; token_type: string }, Date.now());
}

describe("two daemons refresh one grant at once", () => {
  let server: OAuthMcpServer;
  let db: Db;
  let dir: string;
  beforeAll(async () => {
    server = await startOAuthMcpServer();
    dir = mkdtempSync(join(tmpdir(), "wardrik-refresh-race-"));
    db = await openDb((await createTestDatabase()).url);
  });
  afterAll(async () => {
    await db?.close();
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("the one refused takes the other's fresh tokens, and the grant stays", async () => {
    const client = server.preregister([REDIRECT]);
    const secrets = new SecretStore(db, join(dir, "secret-key"), { env: KEY });
    const vault = new McpGrantStore(db, secrets);
    const tokens = await login(server, client);
    const doc = { client: { client_id: client.clientId, client_secret: client.clientSecret }, tokens };
    await vault.put("default", "notes", JSON.stringify(doc));

    const ctx = (grants: McpGrantStore): OAuthContext => ({
      grants,
      redactor: new SecretRedactor(),
      log: silentLogger,
      homeOrg: "default",
      callbackUrl: () => REDIRECT,
      now: () => Date.now(),
      changed: () => undefined,
    });
    const auth = new ServerAuth("notes", { url: server.url });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const fast = new McpOAuthSession("default", auth, ctx(vault), doc);
    const slow = new McpOAuthSession("default", auth, ctx(new StalledVault(db, secrets, gate)), doc);

    // The slow daemon reads the vault (the old grant) and stalls; the fast one refreshes meanwhile.
    const slowRefresh = slow.refresh(tokens.access_token);
    const fresh = await fast.refresh(tokens.access_token);
    expect(fresh).toBeDefined();
    expect(server.stats.refreshes).toBe(1);
    open();
    // The slow one sends the used refresh token, is refused, and takes the fast one's token from the vault.
    expect(await slowRefresh).toBe(fresh);
    expect(server.stats.refusedRefreshes).toBe(1);
    const kept = parseGrant((await vault.get("default", "notes"))!);
    expect(kept.tokens?.access_token).toBe(fresh);
    expect(kept.refused).toBeUndefined();
    expect(slow.state()).toBe("authorized");
  });
});
