import { afterEach, describe, expect, it } from "vitest";
import type { Script } from "@wardrik/testing";
import { LOST_ANSWER } from "../../src/runtime/types.js";
import type { ToolCallContext, ToolInfo } from "../../src/tools/toolset.js";
import { createHarness, FnToolset, type Harness } from "../helpers/runtime-harness.js";
import { withSideConnection } from "../helpers/side-connection.js";

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close().catch(() => undefined);
});
async function harness(opts: Parameters<typeof createHarness>[0] = {}): Promise<Harness> {
  const h = await createHarness(opts);
  open.push(h);
  return h;
}
/** Stops a runtime the way a crash would leave it: nothing more is written. */
async function crash(h: Harness): Promise<string> {
  await h.runtime.close();
  await h.store.db.close();
  return h.dir;
}

const call = (tool: string, args: Record<string, unknown> = {}) => ({ tool, args });

/** A toolset whose calls block until released, recording every attempt with its key. */
function gated() {
  const attempts: { tool: string; key: string }[] = [];
  let release = false;
  const waiters: (() => void)[] = [];
  const run = (name: string) => async (_args: unknown, ctx: ToolCallContext) => {
    attempts.push({ tool: name, key: ctx.idempotencyKey });
    if (!release) await new Promise<void>((r) => waiters.push(r));
    return { ok: true as const, output: `${name} done` };
  };
  const toolset = new FnToolset("ops")
    .add("read", run("read"), { readOnly: true })
    .add("charge", run("charge"))
    .add("upsert", run("upsert"), { idempotent: true })
    .add("quick", (_a, ctx) => {
      attempts.push({ tool: "quick", key: ctx.idempotencyKey });
      return { ok: true, output: "quick done" };
    });
  return {
    toolset,
    attempts,
    open: () => {
      release = true;
      for (const w of waiters.splice(0)) w();
    },
  };
}

describe("recovery after a crash", () => {
  it("replays completed calls, re-runs safe ones with the same key, and asks before repeating unsafe ones", async () => {
    const g1 = gated();
    const h = await harness({ toolsets: [g1.toolset] });
    const script: Script = {
      steps: [{ tool_calls: [call("ops/quick"), call("ops/read"), call("ops/upsert"), call("ops/charge")] }, { text: "{{result}}" }],
    };
    const a = await h.agent({ name: "a", script });
    await h.runtime.enqueue(a, "main", "go");
    await h.waitFor((e) => e.type === "dev.wardrik.call.completed");
    while (g1.attempts.length < 4) await new Promise((r) => setTimeout(r, 5));
    const keys = Object.fromEntries(g1.attempts.map((x) => [x.tool, x.key]));
    const dir = await crash(h);

    const g2 = gated();
    g2.open();
    const h2 = await harness({ toolsets: [g2.toolset], dir });
    h2.script("a", script);
    await h2.runtime.recover();
    const asked = await h2.waitFor((e) => e.type === "dev.wardrik.approval.requested");
    expect(asked.data).toMatchObject({ tool: "ops/charge", reason: LOST_ANSWER });
    await h2.waitFor((e) => e.type === "dev.wardrik.turn.parked");
    // quick completed before the crash: never again. read and upsert ran again with their keys.
    expect(g2.attempts.map((x) => x.tool).sort()).toEqual(["read", "upsert"]);
    for (const x of g2.attempts) expect(x.key).toBe(keys[x.tool]);
    await h2.runtime.approve((await h2.store.agents.get(a.id))!, String(asked.data.call));
    const end = await h2.waitFor((e) => e.type === "dev.wardrik.turn.completed");
    expect(g2.attempts.map((x) => x.tool).sort()).toEqual(["charge", "read", "upsert"]);
    expect(g2.attempts.find((x) => x.tool === "charge")!.key).toBe(keys.charge);
    expect(end.data.reply).toBe("charge done");
  });

  it("a denied interrupted call tells the model, without running it", async () => {
    const g1 = gated();
    const h = await harness({ toolsets: [g1.toolset] });
    const script: Script = { steps: [{ tool_calls: [call("ops/charge")] }, { text: "{{result}}" }] };
    const a = await h.agent({ name: "a", script });
    await h.runtime.enqueue(a, "main", "go");
    while (g1.attempts.length < 1) await new Promise((r) => setTimeout(r, 5));
    const dir = await crash(h);
    const g2 = gated();
    const h2 = await harness({ toolsets: [g2.toolset], dir });
    h2.script("a", script);
    await h2.runtime.recover();
    const asked = await h2.waitFor((e) => e.type === "dev.wardrik.approval.requested");
    await h2.runtime.deny((await h2.store.agents.get(a.id))!, String(asked.data.call), "it did run; I checked");
    const end = await h2.waitFor((e) => e.type === "dev.wardrik.turn.completed");
    expect(end.data.reply).toContain("it did run; I checked");
    expect(g2.attempts).toEqual([]);
  });

  it("an MCP tool whose only hint is idempotentHint is not re-run after a crash: a person decides", async () => {
    const attempts: string[] = [];
    const mcpLike = () => {
      const t = new FnToolset("linear").add(
        "update_issue",
        async (_args, ctx) => {
          attempts.push(ctx.idempotencyKey);
          await new Promise(() => undefined);
          return { ok: true, output: "never" };
        },
        { idempotent: true },
      );
      return Object.assign(t, { kind: "mcp" as const });
    };
    const h = await harness({ toolsets: [mcpLike()] });
    const script: Script = { steps: [{ tool_calls: [call("linear/update_issue")] }, { text: "{{result}}" }] };
    const a = await h.agent({ name: "a", script });
    await h.runtime.enqueue(a, "main", "go");
    while (attempts.length < 1) await new Promise((r) => setTimeout(r, 5));
    const dir = await crash(h);
    const h2 = await harness({ toolsets: [mcpLike()], dir });
    h2.script("a", script);
    await h2.runtime.recover();
    const asked = await h2.waitFor((e) => e.type === "dev.wardrik.approval.requested");
    expect(asked.data).toMatchObject({ tool: "linear/update_issue", reason: LOST_ANSWER, lost: true, code: "lost", retryable: true });
    expect(attempts).toHaveLength(1);
  });

  it("a turn interrupted during a model call calls the model again", async () => {
    const h = await harness();
    const a = await h.agent({ name: "a", script: { steps: [{ hang: true }] } });
    await h.runtime.enqueue(a, "main", "hello");
    await h.waitFor((e) => e.type === "dev.wardrik.turn.started");
    while ((h.models.get("a")?.calls.length ?? 0) === 0) await new Promise((r) => setTimeout(r, 5));
    const dir = await crash(h);
    const h2 = await harness({ dir });
    h2.script("a", { steps: [{ text: "back: {{message}}" }] });
    await h2.runtime.recover();
    const end = await h2.waitFor((e) => e.type === "dev.wardrik.turn.completed");
    expect(end.data.reply).toBe("back: hello");
    expect(h2.events.filter((e) => e.type === "dev.wardrik.turn.started")).toHaveLength(0);
  });

  it("messages accepted before the crash each get exactly one turn", async () => {
    const h = await harness();
    const a = await h.agent({ name: "a", script: { steps: [{ hang: true }] } });
    await h.runtime.enqueue(a, "main", "one");
    await h.waitFor((e) => e.type === "dev.wardrik.turn.started");
    await h.runtime.enqueue(a, "main", "two");
    await h.runtime.enqueue(a, "other", "three");
    const dir = await crash(h);
    const h2 = await harness({ dir });
    h2.script("a", { steps: [{ text: "re {{message}}" }] });
    await h2.runtime.recover();
    await h2.waitFor((e) => e.type === "dev.wardrik.turn.completed" && e.data.reply === "re two");
    await h2.waitFor((e) => e.type === "dev.wardrik.turn.completed" && e.data.reply === "re three");
    await h2.waitFor((e) => e.type === "dev.wardrik.turn.completed" && e.data.reply === "re one");
    await new Promise((r) => setTimeout(r, 50));
    const { inputs, turns } = await withSideConnection(h2.databaseUrl, async (db) => ({
      inputs: await db.all<{ text: string; status: string; run: string }>("SELECT text, status, run FROM inputs ORDER BY id"),
      turns: await db.all<{ id: string; status: string }>("SELECT id, status FROM turns"),
    }));
    expect(inputs.map((i) => [i.text, i.status])).toEqual([
      ["one", "claimed"],
      ["two", "claimed"],
      ["three", "claimed"],
    ]);
    expect(new Set(inputs.map((i) => i.run)).size).toBe(3);
    expect(turns.every((t) => t.status === "completed")).toBe(true);
  });
});

/**
 * Worker tools that drop out of view the moment a round is saved, and come
 * back when the runtime waits for them: what a cluster node sees when the
 * node its workers are connected to misses a heartbeat, or freezes, just as
 * a round starts.
 */
class FlickeringWorkers extends FnToolset {
  hidden = false;
  waits = 0;
  constructor() {
    super("workers");
  }
  override list(): ToolInfo[] {
    return this.hidden ? [] : super.list();
  }
  waitFor(): Promise<boolean> {
    this.waits += 1;
    this.hidden = false;
    return Promise.resolve(true);
  }
}

describe("a worker tool out of view when its call starts", () => {
  it("the call waits for a worker (worker_grace) and runs: a safe call never fails 'No worker serves', nobody is asked about an unsafe one", async () => {
    const workers = new FlickeringWorkers();
    const ran: string[] = [];
    const run = (name: string) => (_args: unknown, ctx: ToolCallContext) => {
      ran.push(`${name} ${ctx.attempt}`);
      return { ok: true as const, output: `${name} done` };
    };
    workers.add("lookup", run("lookup"), { readOnly: true }).add("charge", run("charge"));
    const h = await harness({ toolsets: [workers], workerGraceMs: 30_000 });
    h.bus.subscribe("*", (e) => {
      if (e.type === "dev.wardrik.round.saved") workers.hidden = true;
    });
    const a = await h.agent({
      name: "a",
      tools: ["workers/*"],
      script: { steps: [{ tool_calls: [call("workers/lookup"), call("workers/charge")] }, { text: "done" }] },
    });
    const end = await h.ask(a, "go");
    expect(end.type).toBe("dev.wardrik.turn.completed");
    expect(workers.waits).toBeGreaterThan(0);
    const types = h.events.filter((e) => e.run === end.run).map((e) => e.type.replace("dev.wardrik.", ""));
    expect(types.filter((t) => t === "call.failed" || t === "approval.requested")).toEqual([]);
    expect(ran.sort()).toEqual(["charge 1", "lookup 1"]);
  });
});

describe("unreadable saved state", () => {
  it("a corrupt row makes that agent unreadable with the reason; the others run", async () => {
    const h = await harness();
    const a = await h.agent({ name: "a", script: { steps: [{ hang: true }] } });
    const b = await h.agent({ name: "b", script: { steps: [{ text: "b fine" }] } });
    await h.runtime.enqueue(a, "main", "x");
    await h.waitFor((e) => e.type === "dev.wardrik.turn.started");
    const dir = await crash(h);
    await withSideConnection(h.databaseUrl, (db) => db.run("UPDATE messages SET content = '{broken' WHERE role = 'user'"));
    const h2 = await harness({ dir });
    h2.script("a", { steps: [{ text: "never" }] });
    h2.script("b", { steps: [{ text: "b fine" }] });
    await h2.runtime.recover();
    await h2.waitFor((e) => e.type === "dev.wardrik.agent.unreadable");
    const row = (await h2.store.agents.get(a.id))!;
    expect(row.status).toBe("unreadable");
    expect(row.reason).toMatch(/saved message 1 of conversation .* cannot be read/);
    const end = await h2.ask((await h2.store.agents.get(b.id))!, "hi");
    expect(end.data.reply).toBe("b fine");
  });

  it("a turn saved by a newer format is not resumed", async () => {
    const h = await harness();
    const a = await h.agent({ name: "a", script: { steps: [{ hang: true }] } });
    await h.runtime.enqueue(a, "main", "x");
    await h.waitFor((e) => e.type === "dev.wardrik.turn.started");
    const dir = await crash(h);
    await withSideConnection(h.databaseUrl, (db) => db.run("UPDATE turns SET format = 99"));
    const h2 = await harness({ dir });
    h2.script("a", { steps: [{ text: "never" }] });
    await h2.runtime.recover();
    const e = await h2.waitFor((x) => x.type === "dev.wardrik.agent.unreadable");
    expect(String(e.data.reason)).toMatch(/newer Wardrik \(state format 99/);
    expect(h2.models.get("a")?.calls ?? []).toHaveLength(0);
  });
});
