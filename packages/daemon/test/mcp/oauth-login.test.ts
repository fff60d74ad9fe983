/**
 * OAuth for remote MCP servers, end to end: the built daemon and CLI against
 * a real OAuth-protected MCP server (the MCP SDK's server pieces, with an
 * authorization server that approves by itself). SQLite only: the test reads
 * the database file to prove no token is stored in plain text.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, type TestProject, type WireEvent } from "../helpers/spawn-daemon.js";
import { startOAuthMcpServer, type OAuthMcpServer } from "./oauth/oauth-mcp-server.js";

interface ServerJson {
  name: string;
  transport: string;
  status: string;
  reason?: string;
  tools: string[];
  auth: string;
}

const SCRIPT = `steps:
  - tool_calls: [{ tool: secure/echo, args: { text: "{{message}}" } }]
  - text: "Result: {{result}}"
`;

describe("OAuth login to a remote MCP server", () => {
  let server: OAuthMcpServer;
  let p: TestProject;
  let acmeAgent: string;
  /** Everything the daemon wrote on stderr, across restarts. */
  let logs = "";

  beforeAll(async () => {
    server = await startOAuthMcpServer();
    p = await createProject({
      // Granted to acme too, whose grant is its own.
      config: (text) => `${text.replace(/\n?$/, "\n")}mcp:\n  secure:\n    url: ${server.url}\n    orgs: [acme]\n`,
      scripts: { securebot: SCRIPT },
      files: {
        "agents/helper.md": agentFile({ description: "Echoes through the secure server", model: "securebot", tools: ["secure/*"] }),
      },
    });
  });
  afterAll(async () => {
    await p?.dispose();
    await server?.close();
  });

  const ls = async (): Promise<ServerJson> => {
    const r = await p.cli(["mcp", "ls", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    return (JSON.parse(r.stdout) as ServerJson[]).find((s) => s.name === "secure")!;
  };
  const ask = async (text: string) => {
    const r = await p.cli(["ask", "helper", text]);
    return { ...r, stdout: r.stdout.trim() };
  };
  const login = async () => {
    const cli = p.spawnCli(["mcp", "login", "secure", "--no-browser"]);
    await cli.waitForOutput((out) => /^http:\/\/\S+$/m.test(out));
    const url = /^(http:\/\/\S+)$/m.exec(cli.stdout())![1]!;
    const page = await server.approve(url);
    expect(page.status).toBe(200);
    expect(page.text).toContain("Logged in");
    const done = await cli.done;
    expect(done.code, done.stderr).toBe(0);
    return { url, done };
  };

  it("a server that answers 401 with a resource_metadata challenge shows as needing a login, in mcp ls and agent show", async () => {
    expect(await ls()).toMatchObject({ transport: "http", status: "login_needed", auth: "login_needed", tools: [] });
    const table = await p.cli(["mcp", "ls"]);
    expect(table.stdout).toMatch(/secure\s+http http:\/\/127\.0\.0\.1:\d+\/mcp\s+login needed\s+login needed/);
    expect(table.stdout).toContain("run wardrik mcp login secure");
    const show = await p.cli(["agent", "show", "helper", "--json"]);
    const sources = (JSON.parse(show.stdout) as { tool_sources: { name: string; status: string; reason?: string }[] }).tool_sources;
    expect(sources).toContainEqual({ name: "secure", status: "login_needed", reason: expect.stringContaining("wardrik mcp login secure") });
    expect(server.stats.unauthorized).toBeGreaterThan(0);
  });

  it("mcp login runs the authorization-code flow with PKCE, dynamic registration and the resource parameter", async () => {
    const { url, done } = await login();
    const asked = new URL(url);
    expect(asked.searchParams.get("code_challenge_method")).toBe("S256");
    expect(asked.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(asked.searchParams.get("resource")).toBe(server.url);
    expect(asked.searchParams.get("redirect_uri")).toBe(`${p.url}/v1/oauth/callback`);
    expect(done.stdout).toContain("Logged in: Wardrik can use MCP server secure for org default.");
    // One registration (no client_id in config.yaml), one code exchanged for tokens meant for this server.
    expect(server.stats).toMatchObject({ registrations: 1, authorizations: 1, codeExchanges: 1 });
    expect(server.resources).toEqual([server.url, server.url]);
    expect(await ls()).toMatchObject({ auth: "authorized", tools: ["echo"] });
  });

  it("an agent calls the server with the grant", async () => {
    const r = await ask("hello");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("Result: secure echo: hello (for a logged-in client)");
  });

  it("the grant belongs to the org that logged in: another org's agent still needs its own login", async () => {
    const made = await p.api(
      "POST",
      "/v1/agents",
      { name: "acme-helper", description: "Acme's", model: "securebot", tools: ["secure/*"] },
      { headers: { "Wardrik-Org": "acme" } },
    );
    expect(made.status, made.text).toBe(201);
    const acme = await p.cli(["mcp", "ls", "--json", "--org", "acme"]);
    expect((JSON.parse(acme.stdout) as ServerJson[]).find((s) => s.name === "secure")).toMatchObject({
      status: "login_needed",
      auth: "login_needed",
    });
    acmeAgent = (made.json as { id: string }).id;
    const show = JSON.parse((await p.cli(["agent", "show", "acme/acme-helper", "--json"])).stdout) as {
      tool_sources: { name: string; status: string; reason?: string }[];
    };
    expect(show.tool_sources).toContainEqual({
      name: "secure",
      status: "login_needed",
      reason: expect.stringContaining("wardrik mcp login secure"),
    });
    // Acme's agent does not get the server's tools through default's grant.
    const r = await p.cli(["ask", "acme/acme-helper", "hello from acme"]);
    expect(r.stdout).not.toContain("for a logged-in client");
    // The default org's grant is untouched.
    expect(await ls()).toMatchObject({ auth: "authorized" });
  });

  it("refreshes the token after a 401, and before it expires", async () => {
    server.expireAccessTokens();
    const before = { ...server.stats };
    // The first access tokens after this refresh live 30 s: less than the minute before expiry when Wardrik refreshes.
    server.accessTtlSeconds = 30;
    const afterExpiry = await ask("after expiry");
    expect(afterExpiry.stdout).toBe("Result: secure echo: after expiry (for a logged-in client)");
    expect(server.stats.refreshes).toBe(before.refreshes + 1);
    expect(server.stats.unauthorized).toBeGreaterThan(before.unauthorized);

    server.accessTtlSeconds = 3600;
    const mid = { ...server.stats };
    const early = await ask("before expiry");
    expect(early.stdout).toBe("Result: secure echo: before expiry (for a logged-in client)");
    // Refreshed before sending: the server never had to refuse the old token.
    expect(server.stats.refreshes).toBe(mid.refreshes + 1);
    expect(server.stats.unauthorized).toBe(mid.unauthorized);
  });

  it("the grant survives a restart of the daemon", async () => {
    logs += p.daemonStderr();
    await p.restart();
    const r = await ask("after restart");
    expect(r.stdout).toBe("Result: secure echo: after restart (for a logged-in client)");
    expect(server.stats).toMatchObject({ registrations: 1, codeExchanges: 1 });
  });

  /** Every token the authorization server handed out is absent from the database file, the daemon's log, the events and `outputs`. */
  const expectNoTokenAnywhere = async (outputs: string[] = []) => {
    const secrets = server.issued().filter((s) => !s.startsWith("client_"));
    expect(secrets.length).toBeGreaterThan(4);
    const db = join(p.dir, ".wardrik", "wardrik.db");
    const onDisk = [db, `${db}-wal`]
      .filter(existsSync)
      .map((f) => readFileSync(f).toString("latin1"))
      .join("");
    const acmeEvents = await p.api("GET", `/v1/agents/${acmeAgent}/events`, undefined, { headers: { "Wardrik-Org": "acme" } });
    expect(acmeEvents.status).toBe(200);
    const events = JSON.stringify([await p.events("helper"), acmeEvents.json]);
    const log = logs + p.daemonStderr();
    const printed = outputs.join("\n");
    for (const s of secrets) {
      expect(onDisk.includes(s), "database").toBe(false);
      expect(log.includes(s), "log").toBe(false);
      expect(events.includes(s), "events").toBe(false);
      expect(printed.includes(s), "CLI output").toBe(false);
    }
    expect(onDisk).toContain("mcp_grants");
  };

  it("tokens never appear in plain text: not in the database file, the log or the events", async () => {
    await expectNoTokenAnywhere();
  });

  it("a revoked grant: the call fails saying a login is needed, and mcp ls and agent show say so", async () => {
    server.revokeAll();
    const r = await ask("after revoke");
    const failed = (await p.events("helper")).filter((e: WireEvent) => e.type.endsWith("call.failed")).at(-1);
    expect(String(failed?.data.error)).toMatch(
      /MCP server "secure" needs a login for org default \(the authorization server refused the stored grant: invalid_grant.*\): run wardrik mcp login secure/,
    );
    expect(r.stdout).toContain("needs a login");
    expect(server.stats.refusedRefreshes).toBeGreaterThan(0);
    const view = await ls();
    expect(view).toMatchObject({ status: "login_needed", auth: "login_needed" });
    expect(view.reason).toContain("refused the stored grant");
    const show = JSON.parse((await p.cli(["agent", "show", "helper", "--json"])).stdout) as { tool_sources: { status: string }[] };
    expect(show.tool_sources).toContainEqual(expect.objectContaining({ name: "secure", status: "login_needed" }));
  });

  it("logging in again reuses the registration; mcp logout revokes the tokens and removes the grant", async () => {
    await login();
    expect(server.stats.registrations).toBe(1);
    expect((await ask("back again")).stdout).toBe("Result: secure echo: back again (for a logged-in client)");
    const revocations = server.stats.revocations;
    const out = await p.cli(["mcp", "logout", "secure", "--json"]);
    expect(JSON.parse(out.stdout)).toEqual({ server: "secure", org: "default", removed: true, revoked: true });
    expect(server.stats.revocations).toBe(revocations + 2);
    expect(await ls()).toMatchObject({ status: "login_needed", auth: "login_needed" });
    const again = await p.cli(["mcp", "logout", "secure"]);
    expect(again.stdout).toContain("was not logged in to MCP server secure; nothing to remove");
    // The call after the logout fails clearly, and no error along the way (revoked, refused, logged out) carries a token.
    const after = await ask("after logout");
    expect(after.stdout).toContain("needs a login");
    const show = await p.cli(["agent", "show", "helper", "--json"]);
    await expectNoTokenAnywhere([after.stdout, after.stderr, show.stdout, out.stdout, again.stdout, JSON.stringify(await ls())]);
  });
});
