/**
 * OAuth with a client registered by hand (`oauth.client_id` and
 * `client_secret` in config.yaml): the login uses that client and registers
 * none; the secret authenticates the token requests and is never recorded.
 * The same real OAuth-protected MCP server as oauth-login.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, type TestProject } from "../helpers/spawn-daemon.js";
import { startOAuthMcpServer, type OAuthMcpServer } from "./oauth/oauth-mcp-server.js";

describe("OAuth login with a client from config.yaml", () => {
  let server: OAuthMcpServer;
  let p: TestProject;
  let client: { clientId: string; clientSecret: string };
  const redirectUris: string[] = [];

  beforeAll(async () => {
    server = await startOAuthMcpServer();
    client = server.preregister(redirectUris);
    const env = { MCP_CLIENT_SECRET: client.clientSecret };
    p = await createProject({
      config: (text) =>
        `${text.replace(/\n?$/, "\n")}mcp:\n  notes:\n    url: ${server.url}\n    oauth:\n` +
        `      client_id: ${client.clientId}\n      client_secret: "\${env:MCP_CLIENT_SECRET}"\n`,
      env,
      // The CLI reads config.yaml too (for the address), and refuses unresolved ${env:} values.
      cliEnv: env,
      scripts: {
        notebot: "steps:\n  - tool_calls: [{ tool: notes/echo, args: { text: '{{message}}' } }]\n  - text: 'Result: {{result}}'\n",
      },
      files: { "agents/helper.md": agentFile({ description: "Echoes through notes", model: "notebot", tools: ["notes/*"] }) },
    });
    redirectUris.push(`${p.url}/v1/oauth/callback`);
  });
  afterAll(async () => {
    await p?.dispose();
    await server?.close();
  });

  it("logs in with the configured client, registers none, and the agent's call works", async () => {
    const cli = p.spawnCli(["mcp", "login", "notes", "--no-browser"]);
    await cli.waitForOutput((out) => /^http:\/\/\S+$/m.test(out));
    const url = new URL(/^(http:\/\/\S+)$/m.exec(cli.stdout())![1]!);
    expect(url.searchParams.get("client_id")).toBe(client.clientId);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("resource")).toBe(server.url);
    expect((await server.approve(url.href)).status).toBe(200);
    const done = await cli.done;
    expect(done.code, done.stderr).toBe(0);
    expect(server.stats).toMatchObject({ registrations: 0, authorizations: 1, codeExchanges: 1 });

    const r = await p.cli(["ask", "helper", "configured"]);
    expect(r.stdout.trim()).toBe("Result: secure echo: configured (for a logged-in client)");

    // A refresh authenticates with the secret too.
    server.expireAccessTokens();
    const again = await p.cli(["ask", "helper", "refreshed"]);
    expect(again.stdout.trim()).toBe("Result: secure echo: refreshed (for a logged-in client)");
    expect(server.stats.refreshes).toBe(1);

    const recorded = JSON.stringify(await p.events("helper")) + p.daemonStderr() + done.stdout + done.stderr + r.stdout + again.stdout;
    for (const s of server.issued()) expect(recorded.includes(s), s.slice(0, 3)).toBe(false);
    expect(server.issued()).toContain(client.clientSecret);
  });
});
