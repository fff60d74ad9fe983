/**
 * Tool patterns that match nothing, and what an agent can call: the built-in
 * files toolset (real, over a SQLite file) plus two stand-in toolsets whose
 * tools come and go, as workers' and MCP servers' do.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/ids.js";
import { SqliteDb } from "../../src/store/sqlite-db.js";
import { toolPatternProblems } from "../../src/tools/check-tool-patterns.js";
import { describeAgentTools } from "../../src/tools/describe-agent-tools.js";
import { FilesToolset } from "../../src/tools/files-toolset.js";
import { ToolRegistry } from "../../src/tools/tool-registry.js";
import type { ToolInfo, Toolset } from "../../src/tools/toolset.js";

const dir = mkdtempSync(join(tmpdir(), "wardrik-patterns-"));
const db = new SqliteDb(join(dir, "t.db"));
afterAll(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

function dynamic(namespace: string, tools: Partial<ToolInfo>[], extra: Partial<Toolset> = {}): Toolset {
  return {
    namespace,
    list: () =>
      tools.map((t) => ({ description: "", inputSchema: {}, readOnly: false, idempotent: false, ...t, name: `${namespace}/${t.name}` })),
    call: () => Promise.resolve({ ok: true, output: null }),
    ...extra,
  };
}

function registry(workerTools: Partial<ToolInfo>[] = [], mcp: Partial<Toolset> = {}): ToolRegistry {
  const r = new ToolRegistry();
  r.add(new FilesToolset(db, systemClock));
  r.add(dynamic("workers", workerTools));
  r.add(dynamic("fs", [{ name: "read_text_file", readOnly: true }], mcp));
  return r;
}

const scope = { org: "default", agentId: "agt_1" };

describe("toolPatternProblems", () => {
  it("names unknown namespaces, with a close known one", () => {
    expect(toolPatternProblems(["file", "workres/*", "nothing/x"], registry(), "default")).toEqual([
      { pattern: "file", reason: 'no tool namespace "file" (did you mean "files"?); the namespaces are files, workers, fs' },
      { pattern: "workres/*", reason: 'no tool namespace "workres" (did you mean "workers"?); the namespaces are files, workers, fs' },
      { pattern: "nothing/x", reason: 'no tool namespace "nothing"; the namespaces are files, workers, fs' },
    ]);
  });

  it("checks names in the built-in files namespace, not in namespaces whose tools come and go", () => {
    expect(
      toolPatternProblems(["files/raed", "files/read", "files/*", "workers/not_yet", "fs/anything", "*", "*/read"], registry(), "default"),
    ).toEqual([
      { pattern: "files/raed", reason: "no files tool matches; files has files/read, files/write, files/list, files/search, files/delete" },
    ]);
  });
});

describe("describeAgentTools", () => {
  it("lists every tool under both names with source and safety, and says why a pattern matches nothing", async () => {
    const r = registry(
      [
        { name: "find_order", readOnly: true },
        { name: "refund_order", idempotent: true },
      ],
      {
        skipped: () => [{ tool: "bad.name", reason: "not a valid model name" }],
      },
    );
    const t = await describeAgentTools(["files/read", "workers/*", "fs", "workres/*"], r, scope);
    expect(t.tools.map((x) => [x.name, x.model_name, x.source, x.namespace, x.read_only, x.idempotent])).toEqual([
      ["files/read", "files__read", "builtin", "files", true, true],
      ["fs/read_text_file", "fs__read_text_file", "mcp", "fs", true, false],
      ["workers/find_order", "workers__find_order", "worker", "workers", true, false],
      ["workers/refund_order", "workers__refund_order", "worker", "workers", false, true],
    ]);
    expect(t.unmatched).toEqual([{ pattern: "workres/*", reason: expect.stringMatching(/no tool namespace "workres"/), expected: false }]);
    expect(t.skipped).toEqual([{ namespace: "fs", tool: "bad.name", reason: "not a valid model name" }]);
  });

  it("a workers pattern with no worker connected is expected; a down MCP server says why", async () => {
    const r = registry([], { list: () => [], status: () => [{ name: "fs", status: "down", reason: "exited with code 1" }] });
    const t = await describeAgentTools(["workers/find_order", "fs/*"], r, scope);
    expect(t.tools).toEqual([]);
    expect(t.unmatched).toEqual([
      { pattern: "workers/find_order", reason: expect.stringMatching(/no connected worker/), expected: true },
      { pattern: "fs/*", reason: 'MCP server "fs" is down: exited with code 1', expected: false },
    ]);
  });
});
