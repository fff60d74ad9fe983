/**
 * `wardrik mcp serve`: agents as MCP tools over stdio, driven by the MCP SDK's
 * own Client spawning the real CLI against the built daemon, as a desktop
 * client would: inside a project, and elsewhere with WARDRIK_URL/WARDRIK_TOKEN.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentFile, BIN, createProject, freePort, REPO_ROOT, type TestProject } from "../helpers/spawn-daemon.js";

let p: TestProject;
let acmeToken: string;
/** A directory that is no Wardrik project: there the CLI reads WARDRIK_URL / WARDRIK_TOKEN. */
let elsewhere: string;
const clients: Client[] = [];

const text = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;

/** The environment of the runner, without what would point the CLI at another daemon. */
function env(extra: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = { NO_COLOR: "1" };
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && k !== "WARDRIK_URL" && k !== "WARDRIK_TOKEN" && k !== "NODE_OPTIONS") out[k] = v;
  }
  return { ...out, ...extra };
}

/** `wardrik mcp serve ARGS` started by the SDK's stdio client, as Claude Desktop or Cursor would. */
async function serve(o: { cwd: string; args?: string[]; env?: Record<string, string> }): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp", "serve", ...(o.args ?? [])],
    cwd: o.cwd,
    env: env(o.env),
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: "wardrik-stdio-test", version: "1.0.0" });
  clients.push(client);
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

beforeAll(async () => {
  p = await createProject({
    scripts: {
      echoer: "steps:\n  - text: 'You said: {{message}}'\n",
      // A model that takes a moment, as a real one does, so there is something to report progress about.
      thinker: "delay_ms: 300\nsteps:\n  - text: 'Thought about: {{message}}'\n",
    },
    files: {
      "agents/helper.md": agentFile({ description: "Answers questions about the incident queue.", model: "thinker" }),
    },
  });
  // A token of org acme (the CLI's `wardrik token` is tested in cli-conventions and idempotency).
  acmeToken = (await p.apiOk<{ token: string }>("POST", "/v1/tokens", { org: "acme" })).token;
  const made = await p.api(
    "POST",
    "/v1/agents",
    { name: "acme-only", description: "Belongs to acme.", model: "echoer" },
    { headers: { "Wardrik-Org": "acme" } },
  );
  expect(made.status, made.text).toBe(201);
  elsewhere = mkdtempSync(join(tmpdir(), "wardrik-mcp-serve-"));
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await p?.dispose();
  if (elsewhere) rmSync(elsewhere, { recursive: true, force: true });
});

describe("wardrik mcp serve (MCP over stdio)", () => {
  it("inside a project: the org's agents are tools; a call answers with the reply and relays the progress", async () => {
    const { client } = await serve({ cwd: p.dir });
    expect(client.getServerVersion()?.name).toBe("wardrik");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["helper"]);
    expect(tools[0]!.description).toBe("Answers questions about the incident queue.");

    const progress: Progress[] = [];
    const r = await client.callTool({ name: "helper", arguments: { message: "over stdio" } }, undefined, {
      onprogress: (n) => progress.push(n),
    });
    expect(r.isError).toBeFalsy();
    expect(text(r)).toBe("Thought about: over stdio");
    expect(r.structuredContent).toMatchObject({ status: "completed", conversation: "main", reply: "Thought about: over stdio" });
    expect(progress.map((n) => n.message)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^Queued for helper/), expect.stringMatching(/^Calling the model \(thinker\)/)]),
    );
    const events = await p.events("helper");
    expect(events.some((e) => e.type.endsWith("message.queued") && e.data.text === "over stdio")).toBe(true);
  });

  it("elsewhere, configured as the README shows: an org token sees only its org's agents", async () => {
    const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
    const snippet = /```json\n(\{\s*"mcpServers"[\s\S]*?)```/.exec(readme)?.[1];
    expect(snippet, "the README's client configuration").toBeDefined();
    const entry = (JSON.parse(snippet!) as { mcpServers: Record<string, { command: string; args: string[]; env: Record<string, string> }> })
      .mcpServers.wardrik!;
    expect(entry.command).toBe("wardrik");
    expect(Object.keys(entry.env).sort()).toEqual(["WARDRIK_TOKEN", "WARDRIK_URL"]);
    const { client } = await serve({
      cwd: elsewhere,
      args: entry.args.slice(2),
      env: { WARDRIK_URL: p.url, WARDRIK_TOKEN: acmeToken },
    });
    expect(entry.args.slice(0, 2)).toEqual(["mcp", "serve"]);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["acme-only"]);
    await expect(client.callTool({ name: "helper", arguments: { message: "hi" } })).rejects.toThrow(/No agent helper in org acme/);
    expect(text(await client.callTool({ name: "acme-only", arguments: { message: "hi acme" } }))).toBe("You said: hi acme");

    // The admin token reaches acme with --org; an org token cannot reach another org.
    const admin = await serve({ cwd: p.dir, args: ["--org", "acme"] });
    expect((await admin.client.listTools()).tools.map((t) => t.name)).toEqual(["acme-only"]);
    await expect(
      serve({ cwd: elsewhere, args: ["--org", "default"], env: { WARDRIK_URL: p.url, WARDRIK_TOKEN: acmeToken } }),
    ).rejects.toThrow(/refused the request: .*(acme|org)/);
  });

  it("a daemon that is not running: the client hears why, and the token is not in the message", async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const secret = "wdk_not_a_real_token_but_secret";
    const attempt = serve({ cwd: elsewhere, env: { WARDRIK_URL: url, WARDRIK_TOKEN: secret } });
    const error = await attempt.then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    expect(error?.message).toMatch(new RegExp(`Cannot reach the Wardrik daemon at ${url}: ECONNREFUSED`));
    expect(error?.message).not.toContain(secret);
  });
});
