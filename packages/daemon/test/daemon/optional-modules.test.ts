/**
 * The built daemon loads the packages a project does not use only when it
 * uses them: the MCP SDK (client side for MCP servers, server side for the
 * agents' /v1/mcp endpoint), Slack's client, each AI SDK provider,
 * OpenTelemetry and the JSON Schema validator of edited approvals.
 *
 * What the process really loaded is recorded by a resolve hook given to the
 * daemon with `node --import` (test/fixtures/record-packages.mjs), so these
 * tests fail if any import site loads a package eagerly again. What the
 * daemon says it loaded is its `optional module loaded` debug line, which a
 * person sees with `wardrik daemon --log-level debug`.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, describe, expect, it } from "vitest";
import { sourceModules } from "../helpers/bundle-sources.js";
import { agentFile, createProject, type TestProject } from "../helpers/spawn-daemon.js";
import { chunk, sse, startOpenAiLoopback, usageChunk } from "../helpers/openai-loopback.js";
import { EVERYTHING } from "../mcp/mcp-helpers.js";

const RECORDER = pathToFileURL(fileURLToPath(new URL("../fixtures/record-packages.mjs", import.meta.url))).href;

/** Packages a project made by `wardrik init` does not use. */
const OPTIONAL = [
  "@modelcontextprotocol/sdk",
  "@slack/web-api",
  "@ai-sdk/openai",
  "@ai-sdk/anthropic",
  "@ai-sdk/openai-compatible",
  "@opentelemetry/api",
  "@opentelemetry/sdk-trace-base",
  "@cfworker/json-schema",
  // The daemon runs scripted models from @wardrik/testing/scripted-model: the kit's tool runner, and the worker SDK with it, stay out.
  "@wardrik/sdk",
];

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The daemon's environment: the recorder, where it writes, and debug lines. */
function recording(): { env: Record<string, string>; packages: () => string[] } {
  const dir = mkdtempSync(join(tmpdir(), "wardrik-packages-"));
  dirs.push(dir);
  const file = join(dir, "packages.txt");
  return {
    env: { NODE_OPTIONS: `--import ${RECORDER}`, WARDRIK_TEST_PACKAGES_FILE: file, WARDRIK_LOG_LEVEL: "debug" },
    packages: () => {
      const lines = existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
      // Not the command line's own file, which holds the SDK's client every command talks to a daemon with (cli-imports.test.ts
      // checks what it holds): the daemon's packages are those of the files cli.cjs loads.
      const chunks = lines.filter((l) => l.startsWith("file:") && !l.endsWith("/dist/bundle/cli.cjs"));
      const inlined = sourceModules(chunks).map((url) => packageOf(fileURLToPath(url)));
      return [...new Set([...lines.filter((l) => !l.startsWith("file:")), ...inlined.filter((n) => n !== undefined)])];
    },
  };
}

/** The package a module of the bundle came from: one under node_modules, or a workspace package; undefined for wardrik's own. */
function packageOf(path: string): string | undefined {
  const fromNodeModules = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path)?.[1];
  if (fromNodeModules) return fromNodeModules;
  const workspace = /\/packages\/(protocol|sdk|testing)\//.exec(path)?.[1];
  return workspace ? `@wardrik/${workspace}` : undefined;
}

/** What the daemon's `optional module loaded` debug lines say: the package and what needed it. */
function loadLines(p: TestProject): { module: string; reason: string }[] {
  return p
    .daemonStderr()
    .split("\n")
    .filter((l) => l.includes('"optional module loaded"'))
    .map((l) => {
      const { module, reason, ms } = JSON.parse(l) as { module: string; reason: string; ms: number };
      expect(ms).toBeGreaterThanOrEqual(0);
      return { module, reason };
    });
}

describe("optional packages load on first use", () => {
  it("a project as wardrik init makes it starts and runs a turn without them; the agents' MCP endpoint loads the SDK's server side", async (ctx) => {
    const rec = recording();
    const p = await createProject({ env: rec.env, scope: ctx });
    const turn = await p.send("helper", "Remember this");
    expect(turn.end.type).toMatch(/turn\.completed$/);

    const loaded = rec.packages();
    // The recorder works: what every start needs is there, hono and @wardrik/protocol from the bundle's chunks.
    expect(loaded).toEqual(expect.arrayContaining(["zod", "better-sqlite3", "hono", "@wardrik/protocol"]));
    for (const name of OPTIONAL) expect(loaded, name).not.toContain(name);
    expect(loadLines(p)).toEqual([]);

    const client = new Client({ name: "wardrik-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${p.url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${p.token}` } } }),
    );
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["helper"]);
    } finally {
      await client.close();
    }
    expect(rec.packages()).toContain("@modelcontextprotocol/sdk");
    expect(loadLines(p)).toEqual([{ module: "@modelcontextprotocol/sdk (server)", reason: "the agents' MCP endpoint /v1/mcp" }]);
    for (const name of OPTIONAL.filter((n) => n !== "@modelcontextprotocol/sdk")) expect(rec.packages(), name).not.toContain(name);
  });

  it("an MCP server loads the SDK's client side when an agent calls it, and an openai-compatible model its provider", async (ctx) => {
    const server = await startOpenAiLoopback((req) => {
      const answered = (req.body?.messages ?? []).some((m) => m.role === "tool");
      return {
        pieces: sse(
          answered
            ? [chunk({ role: "assistant", content: "It echoed." }), chunk({}, "stop"), usageChunk(20, 3)]
            : [
                chunk({ role: "assistant", content: "" }),
                chunk({
                  tool_calls: [
                    {
                      index: 0,
                      id: "call_echo_1",
                      type: "function",
                      function: { name: "everything__echo", arguments: '{"message":"hi"}' },
                    },
                  ],
                }),
                chunk({}, "tool_calls"),
                usageChunk(10, 5),
              ],
        ),
      };
    });
    const rec = recording();
    const mcp = [
      "mcp:",
      "  everything:",
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(EVERYTHING)}, stdio]`,
      "",
    ];
    const p = await createProject({
      env: rec.env,
      scope: ctx,
      config: (init) => init + "\n" + mcp.join("\n"),
      models: { local: { provider: "openai-compatible", model: "loopback-model", base_url: server.baseUrl, api_key: "x" } },
      files: {
        "policies/open.yaml": "description: Echo freely.\nrules:\n  - tool: everything/*\n    decision: allow\n",
        "agents/echoer.md": agentFile({ description: "Echoes through MCP", model: "local", tools: ["everything/echo"], policy: "open" }),
      },
    });

    // Started: no agent has used the MCP server yet. The provider of a model an agent names loads once the daemon listens.
    await expect.poll(() => loadLines(p).map((l) => l.module), { timeout: 15_000 }).toContain("@ai-sdk/openai-compatible");
    expect(rec.packages()).not.toContain("@modelcontextprotocol/sdk");

    const turn = await p.send("echoer", "Echo hi");
    expect(turn.end.type).toMatch(/turn\.completed$/);
    const events = await p.events("echoer");
    expect(events.find((e) => e.type.endsWith(".call.completed"))?.data).toMatchObject({ tool: "everything/echo" });
    expect(server.requests.length).toBe(2);

    const loaded = rec.packages();
    expect(loaded).toEqual(expect.arrayContaining(["@modelcontextprotocol/sdk", "@ai-sdk/openai-compatible"]));
    for (const name of ["@slack/web-api", "@ai-sdk/openai", "@ai-sdk/anthropic", "@opentelemetry/api"])
      expect(loaded, name).not.toContain(name);
    expect(loadLines(p)).toEqual(
      expect.arrayContaining([
        { module: "@ai-sdk/openai-compatible", reason: 'Model "local"' },
        { module: "@modelcontextprotocol/sdk (client)", reason: 'MCP server "everything"' },
      ]),
    );
  });
});
