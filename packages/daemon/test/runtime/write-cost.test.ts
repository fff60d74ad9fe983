import { afterEach, describe, expect, it } from "vitest";
import { createHarness, FnToolset, type Harness } from "../helpers/runtime-harness.js";
import { withSideConnection } from "../helpers/side-connection.js";
import { TEST_DIALECT } from "../helpers/test-database.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The definition of each of `names`, as the database reports it (either dialect). */
async function indexDefinitions(url: string, names: string[]): Promise<Record<string, string>> {
  return withSideConnection(url, async (c) => {
    const rows =
      TEST_DIALECT === "postgres"
        ? await c.all<{ name: string; sql: string }>("SELECT indexname AS name, indexdef AS sql FROM pg_indexes")
        : await c.all<{ name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL");
    return Object.fromEntries(rows.filter((r) => names.includes(r.name)).map((r) => [r.name, r.sql]));
  });
}

describe("what a turn costs the database", () => {
  it("a one-tool turn is at most 20 statements in 4 commits (the round before its call, the result before the next model call)", async () => {
    const tools = new FnToolset("t").add("lookup", () => ({ ok: true, output: { status: "ok" } }), { readOnly: true });
    h = await createHarness({ toolsets: [tools] });
    const a = await h.agent({
      name: "a",
      tools: ["t/*"],
      script: { steps: [{ tool_calls: [{ tool: "t/lookup", args: {} }] }, { text: "done" }] },
    });
    // The first turn creates the conversation; measure the ones after it.
    await h.ask(a, "warm up");
    const before = { ...h.store.db.stats };
    for (let i = 0; i < 5; i++) expect((await h.ask(a, `turn ${i}`)).type).toBe("dev.wardrik.turn.completed");
    const statements = (h.store.db.stats.statements - before.statements) / 5;
    const commits = (h.store.db.stats.commits - before.commits) / 5;
    expect(commits).toBe(4);
    expect(statements).toBeLessThanOrEqual(20);
  });

  it("keeps only queued inputs and waiting calls in their indexes, so a turn that starts at once writes no index page for them", async () => {
    h = await createHarness();
    const defs = await indexDefinitions(h.databaseUrl, ["inputs_queued", "inputs_agent", "calls_waiting"]);
    expect(Object.keys(defs).sort()).toEqual(["calls_waiting", "inputs_agent", "inputs_queued"]);
    expect(defs.inputs_queued).toMatch(/WHERE \(?status = 'queued'/);
    expect(defs.inputs_agent).toMatch(/WHERE \(?status = 'queued'/);
    expect(defs.calls_waiting).toMatch(/WHERE \(?status = 'waiting'/);
  });
});
