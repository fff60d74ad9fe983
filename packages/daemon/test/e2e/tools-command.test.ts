/**
 * `wardrik tools NAME`: what an agent can call, from a real worker process
 * (the SDK), a real MCP server and the built-in files namespace, under the
 * names policies use and the names the model sees; and tool patterns that
 * match nothing, warned about at load, in reload's answer and in agent show.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, waitFor, type TestProject } from "../helpers/spawn-daemon.js";
import { fixture } from "../mcp/mcp-helpers.js";
import { spawnWorker, type WorkerProcess } from "../workers/helpers.js";

let p: TestProject;
let worker: WorkerProcess;

interface Tools {
  patterns: string[];
  tools: { name: string; model_name: string; source: string; namespace: string; read_only: boolean; idempotent: boolean }[];
  unmatched: { pattern: string; reason: string; expected: boolean }[];
  skipped: { namespace: string; tool: string; reason: string }[];
}

beforeAll(async () => {
  p = await createProject({
    config: (init) =>
      `${init}\nmcp:\n  paged:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(fixture("paged.mjs"))}]\n`,
    files: {
      "agents/wide.md": agentFile({ description: "Reaches every namespace", tools: ["files/read", "workers/*", "paged/*"] }),
      "agents/typo.md": agentFile({ description: "Has typos in its tools", tools: ["file", "workres/*", "files/raed", "workers/not_yet"] }),
    },
  });
  worker = spawnWorker("tools-worker.ts", { WARDRIK_URL: p.url, WARDRIK_TOKEN: p.token, WORKER_NAME: "w1" });
});
afterAll(() => worker.stop());

describe("wardrik tools", () => {
  it("lists worker, MCP and built-in tools under both names, with source and safety, and skipped MCP tools", async () => {
    // Waited for through the API (a CLI process per look cost a node start each time), then listed by the CLI once.
    const wide = await p.agentId("wide");
    await waitFor(
      async () => (await p.apiOk<Tools>("GET", `/v1/agents/${wide}/tools`)).tools.some((x) => x.name === "workers/find_order"),
      "the worker's tools",
      30_000,
    );
    const listed = await p.cli(["tools", "wide", "--json"]);
    expect(listed.code, listed.stderr).toBe(0);
    const tools = JSON.parse(listed.stdout) as Tools;
    const row = (name: string) => tools.tools.find((t) => t.name === name);
    expect(row("workers/find_order")).toEqual({
      name: "workers/find_order",
      model_name: "workers__find_order",
      source: "worker",
      namespace: "workers",
      title: "Find order",
      served_by: [expect.stringMatching(/^w1 \(wkr_\w+\)$/)],
      description: "Find the order associated with a Stripe payment intent.",
      read_only: true,
      idempotent: false,
      input_schema: {
        type: "object",
        properties: { payment_intent: { type: "string", description: "Stripe payment intent ID, such as pi_123" } },
        required: ["payment_intent"],
      },
    });
    expect(row("workers/slow_idempotent")).toMatchObject({ read_only: false, idempotent: true });
    expect(row("paged/reader")).toMatchObject({ model_name: "paged__reader", source: "mcp", read_only: true, idempotent: false });
    expect(row("paged/upsert")).toMatchObject({ read_only: false, idempotent: true });
    expect(row("files/read")).toMatchObject({ model_name: "files__read", source: "builtin", read_only: true });
    expect(row("files/write"), "files/write is not in the agent's patterns").toBeUndefined();
    // The worker's invalid tools never registered; the MCP server's bad name is reported.
    expect(tools.tools.map((t) => t.name)).not.toContain("workers/not_object");
    expect(tools.tools.map((t) => t.name)).not.toContain("paged/bad.name");
    expect(tools.skipped).toEqual([{ namespace: "paged", tool: "bad.name", reason: expect.stringMatching(/model providers accept only/) }]);
    expect(tools.unmatched).toEqual([]);

    const text = await p.cli(["tools", "wide"]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^NAME \(policies\)\s+TITLE\s+MODEL SEES\s+SOURCE\s+READ-ONLY\s+IDEMPOTENT\s+SERVED BY$/m);
    expect(text.stdout).toMatch(/^workers\/find_order\s+Find order\s+workers__find_order\s+worker\s+yes\s+no\s+w1 \(wkr_\w+\)$/m);
    expect(text.stdout).toMatch(/^paged\/upsert\s+-\s+paged__upsert\s+mcp paged\s+no\s+yes\s+-$/m);
    expect(text.stdout).toMatch(/^skipped: paged\/bad\.name: /m);
  });

  it("says why each pattern of an agent matches nothing; a workers pattern without a worker is only a note", async () => {
    const r = await p.cli(["tools", "typo", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const t = JSON.parse(r.stdout) as Tools;
    expect(t.tools).toEqual([]);
    expect(t.unmatched).toEqual([
      { pattern: "file", reason: expect.stringContaining('no tool namespace "file" (did you mean "files"?)'), expected: false },
      { pattern: "workres/*", reason: expect.stringContaining('no tool namespace "workres" (did you mean "workers"?)'), expected: false },
      { pattern: "files/raed", reason: expect.stringContaining("no files tool matches; files has files/read"), expected: false },
      { pattern: "workers/not_yet", reason: expect.stringContaining("no connected worker serves a matching tool yet"), expected: true },
    ]);
    const text = await p.cli(["tools", "typo"]);
    expect(text.stdout).toContain("warning: workres/* matches nothing: no tool namespace");
    expect(text.stdout).toContain("note: workers/not_yet matches nothing");
  });
});

describe("tool patterns that match nothing", () => {
  it("are warned about in the daemon's log at load, in agent show, and in reload's output", async () => {
    const warned = p
      .daemonStderr()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { level: string; msg: string; agent?: string; pattern?: string })
      .filter((l) => l.msg === "tool pattern matches nothing" && l.agent === "typo");
    expect(warned.map((l) => [l.level, l.pattern])).toEqual([
      ["warn", "file"],
      ["warn", "workres/*"],
      ["warn", "files/raed"],
    ]);

    const show = await p.cli(["agent", "show", "typo"]);
    expect(show.stdout).toContain('  warning: tool pattern file matches nothing: no tool namespace "file" (did you mean "files"?)');
    const json = JSON.parse((await p.cli(["agent", "show", "typo", "--json"])).stdout) as { tool_warnings: { pattern: string }[] };
    expect(json.tool_warnings.map((w) => w.pattern)).toEqual(["file", "workres/*", "files/raed"]);

    const reload = await p.cli(["reload"]);
    expect(reload.code, reload.stderr).toBe(0);
    expect(reload.stdout).toContain('warning: typo: tool pattern workres/* matches nothing: no tool namespace "workres"');
    const reloadJson = JSON.parse((await p.cli(["reload", "--json"])).stdout) as { warnings: { agent: string; pattern: string }[] };
    expect(reloadJson.warnings.map((w) => `${w.agent} ${w.pattern}`)).toEqual(["typo file", "typo workres/*", "typo files/raed"]);
  });
});
