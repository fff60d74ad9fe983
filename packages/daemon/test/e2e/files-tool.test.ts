/**
 * The built-in files toolset through the daemon: write, list, search, read,
 * delete; per-agent spaces shared by an agent's conversations; paths that try
 * to leave the space fail with a clear error and the turn goes on.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, short, type TestProject, type WireEvent } from "../helpers/spawn-daemon.js";

let p: TestProject;

const ROUNDTRIP = `steps:
  - tool_calls: [{ tool: files/write, args: { path: docs/plan.md, content: "alpha line\\nthe Needle is here\\nomega" } }]
  - tool_calls: [{ tool: files/list, args: { prefix: docs/ } }]
  - tool_calls: [{ tool: files/search, args: { query: needle } }]
  - tool_calls: [{ tool: files/read, args: { path: docs/plan.md } }]
  - tool_calls: [{ tool: files/delete, args: { path: docs/plan.md } }]
  - tool_calls: [{ tool: files/list, args: {} }]
  - text: "round trip done"
`;

const ESCAPE = `steps:
  - tool_calls:
      - { tool: files/read, args: { path: ../../etc/passwd } }
      - { tool: files/write, args: { path: /etc/wardrik-e2e-escape, content: "x" } }
      - { tool: files/read, args: { path: "notes/../../secret" } }
      - { tool: files/write, args: { path: "notes/\u202Etxt.exe", content: "x" } }
  - text: "carried on after: {{result}}"
`;

// Scenario script: "remember X" writes X to memo.txt; "recall" reads it back.
const MEMO = `scenarios:
  - match: remember
    steps:
      - tool_calls: [{ tool: files/write, args: { path: memo.txt, content: "{{message}}" } }]
      - text: "noted"
  - match: recall
    steps:
      - tool_calls: [{ tool: files/read, args: { path: memo.txt } }]
      - text: "memo: {{result}}"
`;

beforeAll(async () => {
  p = await createProject({
    scripts: { roundtrip: ROUNDTRIP, escape: ESCAPE, memo: MEMO },
    files: {
      "agents/filer.md": agentFile({ description: "Round-trips a file", model: "roundtrip", tools: ["files"] }),
      "agents/escaper.md": agentFile({ description: "Tries to leave its space", model: "escape", tools: ["files"] }),
      "agents/memo.md": agentFile({ description: "Remembers across conversations", model: "memo", tools: ["files"] }),
      "agents/other.md": agentFile({ description: "Another agent with the same script", model: "memo", tools: ["files"] }),
    },
  });
});

const callResults = (events: WireEvent[], run: string) =>
  events
    .filter((e) => e.run === run && /\.call\.(completed|failed)$/.test(e.type))
    .map((e) => ({ tool: String(e.data.tool), ok: short(e.type) === "call.completed", output: e.data.output, error: e.data.error }));

// Each test has agents of its own, so they run at once.
describe.concurrent("the files tool through the daemon", () => {
  it("writes, lists, searches, reads and deletes a file", async () => {
    const r = await p.cli(["ask", "filer", "go", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const turn = JSON.parse(r.stdout) as { id: string; reply: string };
    expect(turn.reply).toBe("round trip done");
    const results = callResults(await p.events("filer"), turn.id);
    const content = "alpha line\nthe Needle is here\nomega";
    expect(results).toEqual([
      { tool: "files/write", ok: true, output: { path: "docs/plan.md", bytes: content.length }, error: undefined },
      {
        tool: "files/list",
        ok: true,
        output: { files: [expect.objectContaining({ path: "docs/plan.md", size: content.length })] },
        error: undefined,
      },
      {
        tool: "files/search",
        ok: true,
        output: { query: "needle", hits: [{ path: "docs/plan.md", line: 2, text: "the Needle is here" }] },
        error: undefined,
      },
      { tool: "files/read", ok: true, output: { path: "docs/plan.md", content }, error: undefined },
      { tool: "files/delete", ok: true, output: { path: "docs/plan.md", deleted: true }, error: undefined },
      { tool: "files/list", ok: true, output: { files: [] }, error: undefined },
    ]);
  });

  it("paths that leave the agent's space fail with a clear error, and the turn goes on", async () => {
    const r = await p.cli(["ask", "escaper", "break out"]);
    expect(r.code, r.stderr).toBe(0);
    // Each failed call is reported on stderr with its reason.
    expect(r.stderr).toMatch(/✗ files\/read: path "\.\.\/\.\.\/etc\/passwd" leaves your file space/);
    expect(r.stderr).toMatch(/✗ files\/write: path "\/etc\/wardrik-e2e-escape" must be relative to your file space/);
    expect(r.stderr).toMatch(/✗ files\/read: path "notes\/\.\.\/\.\.\/secret" leaves your file space/);
    // A path people read back shows what it is: a bidirectional override is refused, saying where.
    expect(r.stderr).toMatch(/✗ files\/write: path must not contain U\+202E \(RIGHT-TO-LEFT OVERRIDE\); it has one at character 7/);
    // The model was told (the last result is in its reply), and answered.
    expect(r.stdout.trim()).toMatch(/^carried on after: .*RIGHT-TO-LEFT OVERRIDE/);

    const events = await p.events("escaper");
    const done = events.find((e) => short(e.type) === "turn.completed")!;
    const results = callResults(events, done.run!);
    expect(results).toHaveLength(4);
    for (const c of results) {
      expect(c.ok).toBe(false);
      expect(String(c.error)).toMatch(/leaves your file space|must be relative to your file space|RIGHT-TO-LEFT OVERRIDE/);
      expect(String(c.error)).not.toMatch(/root:/);
    }
  });

  it("an agent's conversations share its files; other agents do not see them", async () => {
    const w = await p.send("memo", "remember the blue door", "one");
    expect(w.end.data.reply).toBe("noted");

    const r = await p.send("memo", "recall", "two");
    expect(r.end.data.reply).toBe("memo: remember the blue door");

    // Same script, different agent: its space is empty, so the read fails (and the turn still ends).
    const o = await p.send("other", "recall");
    expect(short(o.end.type)).toBe("turn.completed");
    expect(String(o.end.data.reply)).toMatch(/^memo: No file memo\.txt/);
    const failed = callResults(await p.events("other"), o.run);
    expect(failed).toEqual([{ tool: "files/read", ok: false, output: undefined, error: expect.stringMatching(/^No file memo\.txt/) }]);
  });
});
