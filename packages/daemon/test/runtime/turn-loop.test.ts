import { afterEach, describe, expect, it } from "vitest";
import type { ScriptFunction, ScriptStep } from "@wardrik/testing";
import type { ToolCallContext, ToolOutcome } from "../../src/tools/toolset.js";
import { createHarness, FnToolset, types, type Harness } from "../helpers/runtime-harness.js";
import { StatementGate } from "../helpers/statement-gate.js";
import { TEST_DIALECT } from "../helpers/test-database.js";
import { withSideConnection } from "../helpers/side-connection.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const call = (tool: string, args: Record<string, unknown> = {}) => ({ tool, args });

describe("the turn loop", () => {
  it("answers, and records each step as an event in order", async () => {
    h = await createHarness();
    const a = await h.agent({
      name: "a",
      script: { steps: [{ tool_calls: [call("files/write", { path: "n.md", content: "{{message}}" })] }, { text: "saved" }] },
    });
    const end = await h.ask(a, "remember this");
    expect(end.type).toBe("dev.wardrik.turn.completed");
    expect(end.data.reply).toBe("saved");
    expect(types(h.events, end.run)).toEqual([
      "turn.started",
      "model.called",
      "model.replied",
      "round.saved",
      "call.decided",
      "call.started",
      "call.completed",
      "model.called",
      "model.replied",
      "turn.completed",
    ]);
    const seqs = (await h.store.events.list(a.id, 0, 100)).map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  });

  it("saves the whole round, committed, before any of its calls runs", async () => {
    let seen: { status: string; tool: string }[] = [];
    let assistantSaved = false;
    const probe = new FnToolset("probe").add(
      "look",
      async (_args, ctx) => {
        // A second connection sees only what was committed.
        await withSideConnection(h!.databaseUrl, async (db) => {
          seen = await db.all<{ status: string; tool: string }>("SELECT status, tool FROM calls WHERE run = ? ORDER BY position", [
            ctx.run,
          ]);
          const msgs = await db.all<{ role: string; content: string }>("SELECT role, content FROM messages ORDER BY seq");
          assistantSaved = msgs.some((m) => m.role === "assistant" && m.content.includes(ctx.callId));
        });
        return { ok: true, output: "looked" };
      },
      { readOnly: true },
    );
    const slow = new FnToolset("slow").add(
      "wait",
      async () => {
        await new Promise((r) => setTimeout(r, 50));
        return { ok: true, output: "waited" };
      },
      { readOnly: true },
    );
    h = await createHarness({ toolsets: [probe, slow] });
    const a = await h.agent({
      name: "a",
      script: { steps: [{ tool_calls: [call("probe/look"), call("slow/wait"), call("slow/wait")] }, { text: "done" }] },
    });
    const end = await h.ask(a, "go");
    expect(end.data.reply).toBe("done");
    expect(seen.map((s) => s.tool)).toEqual(["probe/look", "slow/wait", "slow/wait"]);
    expect(seen[0]!.status).toBe("running");
    expect(assistantSaved).toBe(true);
  });

  it("runs at most 8 calls of a round at once, and all of them", async () => {
    let inFlight = 0;
    let peak = 0;
    const t = new FnToolset("t").add(
      "work",
      async () => {
        peak = Math.max(peak, ++inFlight);
        await new Promise((r) => setTimeout(r, 30));
        inFlight--;
        return { ok: true, output: { ok: true } };
      },
      { readOnly: true },
    );
    h = await createHarness({ toolsets: [t] });
    const calls = Array.from({ length: 12 }, () => call("t/work"));
    const a = await h.agent({ name: "a", script: { steps: [{ tool_calls: calls }, { text: "ok" }] } });
    const end = await h.ask(a, "go");
    expect(end.type).toBe("dev.wardrik.turn.completed");
    expect(peak).toBe(8);
    expect(types(h.events, end.run).filter((x) => x === "call.completed")).toHaveLength(12);
  });

  it("ends a turn that reaches max_iterations, with the reason", async () => {
    h = await createHarness();
    const a = await h.agent({ name: "a", max_iterations: 3, script: { steps: [{ tool_calls: [call("files/list")] }] } });
    const end = await h.ask(a, "loop");
    expect(end.type).toBe("dev.wardrik.turn.failed");
    expect(String(end.data.reason)).toMatch(/max_iterations \(3/);
    expect(h.models.get("a")!.calls).toHaveLength(3);
  });

  it("ends a turn that passes its timeout", async () => {
    h = await createHarness();
    const a = await h.agent({ name: "a", timeout: 0.3, script: { steps: [{ hang: true }] } });
    const end = await h.ask(a, "wait");
    expect(end.type).toBe("dev.wardrik.turn.failed");
    expect(String(end.data.reason)).toMatch(/timeout of 0.3 s/);
  });

  it("retries transient model errors up to `retries`, and fails with the provider's message beyond", async () => {
    const flaky = (failures: number) => {
      let n = 0;
      return (): ScriptStep => (n++ < failures ? { error: { status: 503, message: "overloaded" } } : { text: "finally" });
    };
    h = await createHarness();
    const ok = await h.agent({ name: "ok", retries: 2, script: flaky(2) });
    expect((await h.ask(ok, "hi")).data.reply).toBe("finally");
    expect(h.models.get("ok")!.calls).toHaveLength(3);
    const bad = await h.agent({ name: "bad", retries: 1, script: flaky(2) });
    const end = await h.ask(bad, "hi");
    expect(end.type).toBe("dev.wardrik.turn.failed");
    expect(String(end.data.reason)).toMatch(/503.*overloaded/);
  });

  it("does not retry a 4xx error", async () => {
    h = await createHarness();
    const a = await h.agent({ name: "a", retries: 5, script: { steps: [{ error: { status: 400, message: "bad tool schema" } }] } });
    const end = await h.ask(a, "hi");
    expect(end.type).toBe("dev.wardrik.turn.failed");
    expect(String(end.data.reason)).toContain("bad tool schema");
    expect(h.models.get("a")!.calls).toHaveLength(1);
  });

  it("tells the model about unknown tools and invalid arguments, and goes on", async () => {
    h = await createHarness();
    const a = await h.agent({
      name: "a",
      tools: ["files"],
      script: { steps: [{ tool_calls: [call("nope/thing"), call("files/read", { path: "../../etc/passwd" })] }, { text: "{{result}}" }] },
    });
    const end = await h.ask(a, "go");
    expect(end.type).toBe("dev.wardrik.turn.completed");
    const failed = h.events.filter((e) => e.type === "dev.wardrik.call.failed").map((e) => String(e.data.error));
    expect(failed[0]).toMatch(/Unknown tool nope\/thing\. Available tools: files__read/);
    expect(failed[1]).toMatch(/leaves your file space/);
  });

  it("fails a call whose result cannot be serialised, without crashing", async () => {
    const t = new FnToolset("t").add("big", () => ({ ok: true, output: { n: 10n } }), { readOnly: true });
    h = await createHarness({ toolsets: [t] });
    const a = await h.agent({ name: "a", script: { steps: [{ tool_calls: [call("t/big")] }, { text: "after" }] } });
    const end = await h.ask(a, "go");
    expect(end.data.reply).toBe("after");
    const failed = h.events.find((e) => e.type === "dev.wardrik.call.failed");
    expect(String(failed?.data.error)).toMatch(/not JSON-serialisable/);
  });
});

describe("conversations", () => {
  it("runs one turn at a time per conversation, taking every queued message", async () => {
    h = await createHarness();
    const a = await h.agent({ name: "a", script: { steps: [{ text: "reply to {{message}}", delay_ms: 100 }] } });
    const first = await h.runtime.enqueue(a, "main", "one");
    await h.waitFor((e) => e.type === "dev.wardrik.turn.started");
    await h.runtime.enqueue(a, "main", "two");
    const third = await h.runtime.enqueue(a, "main", "three");
    const second = await h.waitFor((e) => e.type === "dev.wardrik.turn.started" && (e.data.messages as string[]).includes(third.message));
    expect(second.data.messages).toHaveLength(2);
    const ends = await h.waitFor((e) => e.type === "dev.wardrik.turn.completed" && e.run === second.run);
    expect(ends.data.reply).toBe("reply to three");
    const starts = h.events.filter((e) => e.type === "dev.wardrik.turn.started");
    const firstEnd = h.events.findIndex((e) => e.type === "dev.wardrik.turn.completed");
    expect(h.events.indexOf(starts[1]!)).toBeGreaterThan(firstEnd);
    expect(first.conversation).toBe("main");
  });

  it("starts no second turn beside a start whose claim is on its way; a message queued meanwhile waits its turn", async () => {
    const gate = new StatementGate();
    let finish!: () => void;
    const waits = new FnToolset("t").add(
      "wait",
      () => new Promise<ToolOutcome>((resolve) => (finish = () => resolve({ ok: true, output: "ok" }))),
    );
    const hs = (h = await createHarness({ toolsets: [waits], gate }));
    const script: ScriptFunction = (ctx) =>
      ctx.lastUserMessage === "one" && ctx.stepIndex === 0 ? { tool_calls: [call("t/wait")] } : { text: `reply to ${ctx.lastUserMessage}` };
    const a = await hs.agent({ name: "a", tools: ["t/*"], script });
    const one = await hs.runtime.enqueue(a, "main", "one");
    await hs.waitFor((e) => e.type === "dev.wardrik.call.started");
    const two = await hs.runtime.enqueue(a, "main", "two");
    // The open turn ends; the runner's claim of "two" is held on its way to the database.
    const claim = gate.hold((sql) => sql.startsWith("UPDATE inputs SET status = 'claimed'"));
    finish();
    await claim.reached;
    // A message comes meanwhile: on PostgreSQL it commits beside the held claim; on SQLite it waits for the claim's commit.
    const queuing = hs.runtime.enqueue(a, "main", "three");
    if (TEST_DIALECT === "postgres") await queuing;
    claim.release();
    const three = await queuing;
    const startOf = (message: string) =>
      hs.waitFor((e) => e.type === "dev.wardrik.turn.started" && (e.data.messages as string[]).includes(message));
    await startOf(two.message);
    const last = await startOf(three.message);
    const turnEvents = () =>
      hs.events.filter((e) => /turn\.(started|completed|failed|cancelled)$/.test(e.type)).sort((x, y) => x.seq - y.seq);
    let open = 0;
    for (const e of turnEvents()) {
      open += e.type === "dev.wardrik.turn.started" ? 1 : -1;
      expect(open, `open turns in the conversation after ${e.type} of ${e.run}`).toBeLessThanOrEqual(1);
    }
    await hs.waitFor((e) => e.type === "dev.wardrik.turn.completed" && e.run === last.run);
    const taken = turnEvents()
      .filter((e) => e.type === "dev.wardrik.turn.started")
      .flatMap((e) => e.data.messages as string[]);
    expect(taken).toEqual([one.message, two.message, three.message]);
  });

  it("runs different conversations at the same time, each with its own history", async () => {
    h = await createHarness();
    const a = await h.agent({ name: "a", script: { steps: [{ text: "seen {{message}}", delay_ms: 200 }] } });
    const [x, y] = await Promise.all([h.ask(a, "in c1", "c1"), h.ask(a, "in c2", "c2")]);
    expect([x.data.reply, y.data.reply]).toEqual(["seen in c1", "seen in c2"]);
    const startY = h.events.find((e) => e.type === "dev.wardrik.turn.started" && e.run === y.run)!;
    // The second turn started before the first ended: they overlapped.
    expect(startY.seq).toBeLessThan(x.seq);
    const c1 = await h.store.conversations.find(a.id, "c1");
    const hist = await h.store.conversations.history(c1!.id);
    expect(hist.map((m) => m.message.role)).toEqual(["user", "assistant"]);
  });
});

describe("cancel, kill, clear", () => {
  it("cancel stops the running turn and drops queued messages", async () => {
    h = await createHarness();
    const a = await h.agent({ name: "a", script: { steps: [{ hang: true }] } });
    await h.runtime.enqueue(a, "main", "first");
    const started = await h.waitFor((e) => e.type === "dev.wardrik.turn.started");
    await h.runtime.enqueue(a, "main", "second");
    const r = await h.runtime.cancel(a);
    expect(r).toEqual({ cancelled: [started.run], dropped: 1 });
    const end = await h.waitFor((e) => e.run === started.run && e.type === "dev.wardrik.turn.cancelled");
    expect(end.data.reason).toMatch(/Cancelled/);
    await new Promise((r) => setTimeout(r, 50));
    expect(h.events.filter((e) => e.type === "dev.wardrik.turn.started")).toHaveLength(1);
    expect((await h.store.agents.get(a.id))!.status).toBe("idle");
  });

  it("kill stops one call; the model is told and the turn goes on", async () => {
    let aborted = false;
    let running!: () => void;
    const inTool = new Promise<void>((r) => (running = r));
    const t = new FnToolset("t").add(
      "forever",
      (_args, ctx) =>
        new Promise((resolve) => {
          running();
          ctx.signal.addEventListener("abort", () => {
            aborted = true;
            resolve({ ok: false, kind: "killed", error: "aborted" });
          });
        }),
    );
    h = await createHarness({ toolsets: [t] });
    const a = await h.agent({ name: "a", script: { steps: [{ tool_calls: [call("t/forever")] }, { text: "after kill: {{result}}" }] } });
    const done = h.ask(a, "go");
    const started = await h.waitFor((e) => e.type === "dev.wardrik.call.started");
    await inTool;
    await h.runtime.kill(a, String(started.data.call));
    const end = await done;
    expect(aborted).toBe(true);
    expect(end.type).toBe("dev.wardrik.turn.completed");
    expect(end.data.reply).toMatch(/stopped this call/);
    expect(types(h.events, end.run)).toContain("call.killed");
  });

  it("clear empties the history but keeps the record", async () => {
    h = await createHarness();
    const a = await h.agent({ name: "a", script: { steps: [{ text: "ok" }] } });
    await h.ask(a, "hello");
    const before = (await h.store.events.list(a.id, 0, 1000)).length;
    await h.runtime.clear(a);
    const conv = await h.store.conversations.find(a.id, "main");
    expect(await h.store.conversations.history(conv!.id)).toEqual([]);
    const after = await h.store.events.list(a.id, 0, 1000);
    expect(after.length).toBe(before + 1);
    expect(after.at(-1)!.type).toBe("dev.wardrik.conversation.cleared");
    // The next turn's prompt no longer holds the old messages.
    await h.ask(a, "again");
    const prompt = h.models.get("a")!.calls.at(-1)!.prompt;
    expect(JSON.stringify(prompt)).not.toContain("hello");
  });

  it("kill before the call is dispatched still stops it", async () => {
    let ran = false;
    const t = new FnToolset("t").add("once", () => {
      ran = true;
      return { ok: true, output: "ran" };
    });
    h = await createHarness({ toolsets: [t] });
    const a = await h.agent({ name: "a", script: { steps: [{ tool_calls: [call("t/once")] }, { text: "{{result}}" }] } });
    // Kill as soon as the round commits, before the dispatch gets to run.
    h.bus.subscribe(a.id, (e) => {
      if (e.type === "dev.wardrik.call.started") void h!.runtime.kill(a, String(e.data.call));
    });
    const end = await h.ask(a, "go");
    expect(ran).toBe(false);
    expect(end.data.reply).toMatch(/stopped this call/);
  });

  it("a call whose turn stops while the call is being started is not sent, and the stop does not wait for it", async () => {
    const gate = new StatementGate();
    const sent: string[] = [];
    const t = new FnToolset("t").add("slow", (_args: unknown, ctx: ToolCallContext) => {
      sent.push(ctx.callId);
      return new Promise<ToolOutcome>(() => undefined);
    });
    const policy = { name: "p", rules: [{ tool: "t/slow", decision: "ask" as const }] };
    const hs = (h = await createHarness({ toolsets: [t], gate, policy, toolTimeoutMs: 1_000 }));
    const a = await hs.agent({ name: "a", script: { steps: [{ tool_calls: [call("t/slow")] }, { text: "done" }] } });
    await hs.runtime.enqueue(a, "main", "go");
    const asked = await hs.waitFor((e) => e.type === "dev.wardrik.approval.requested");
    // The approved call's start is held on its way to the database while the daemon stops.
    const start = gate.hold((sql) => sql.startsWith("UPDATE calls SET status = 'running'"));
    await hs.runtime.approve(a, String(asked.data.call));
    await start.reached;
    const closing = hs.runtime.close();
    start.release();
    await closing;
    expect(sent).toEqual([]);
  });

  it("times a call out when the toolset ignores its signal", async () => {
    const t = new FnToolset("t").add("deaf", () => new Promise(() => undefined));
    h = await createHarness({ toolsets: [t], toolTimeoutMs: 100 });
    const a = await h.agent({ name: "a", script: { steps: [{ tool_calls: [call("t/deaf")] }, { text: "{{result}}" }] } });
    const end = await h.ask(a, "go");
    expect(end.data.reply).toMatch(/timed out after 0.1 s/);
  });
});

describe("the record", () => {
  it("commits each event together with the state it describes", async () => {
    h = await createHarness();
    const checks: Promise<string>[] = [];
    // Read from another connection the moment each event is published: its state is already committed.
    h.bus.subscribe("*", (e) => {
      if (e.type !== "dev.wardrik.call.completed" && e.type !== "dev.wardrik.turn.completed") return;
      const [sql, id] = e.type.endsWith("call.completed")
        ? ["SELECT status FROM calls WHERE id = ?", e.data.call]
        : ["SELECT status FROM turns WHERE id = ?", e.run];
      checks.push(withSideConnection(h!.databaseUrl, async (db) => (await db.all<{ status: string }>(sql, [id]))[0]?.status ?? "missing"));
    });
    const a = await h.agent({ name: "a", script: { steps: [{ tool_calls: [call("files/list")] }, { text: "ok" }] } });
    await h.ask(a, "go");
    expect(await Promise.all(checks)).toEqual(["completed", "completed"]);
  });
});
