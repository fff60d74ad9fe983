/**
 * The turn and call machines through the real store, under random histories:
 * messages, model replies with rounds of calls, call outcomes, approvals and
 * denials, kills, and crashes (the runtime and database closed mid-flight and
 * reopened). After each history, what the tools themselves recorded and what
 * the event log says must agree with the invariants:
 *
 * - every accepted message gets exactly one turn;
 * - a conversation has one open turn at a time;
 * - every turn ends;
 * - a completed call never runs again;
 * - an unsafe call never runs twice without a person's approval in between.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ScriptFunction, ScriptStep } from "@wardrik/testing";
import { createHarness, FnToolset, type Harness } from "../helpers/runtime-harness.js";
import type { ToolCallContext, ToolOutcome } from "../../src/tools/toolset.js";
import type { StoredEvent } from "../../src/events/event-bus.js";
import { reusedTestDatabases } from "../helpers/test-database.js";

type ToolKind = "safe" | "idem" | "unsafe" | "ask";
const UNSAFE: ReadonlySet<ToolKind> = new Set(["unsafe", "ask"]);

interface Execution {
  key: string;
  tool: ToolKind;
  at: number;
  settle: (o: ToolOutcome) => void;
  settled: boolean;
}

type Command =
  | { kind: "send"; conversation: number; rounds: ToolKind[][] }
  | { kind: "settle"; pick: number; ok: boolean }
  | { kind: "decide"; pick: number; approve: boolean }
  | { kind: "kill"; pick: number }
  | { kind: "crash" };

const toolKind = fc.constantFrom<ToolKind>("safe", "idem", "unsafe", "ask");
const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("send" as const),
      conversation: fc.nat(1),
      rounds: fc.array(fc.array(toolKind, { minLength: 1, maxLength: 3 }), { maxLength: 2 }),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("settle" as const), pick: fc.nat(), ok: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("decide" as const), pick: fc.nat(), approve: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("kill" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("crash" as const) }) },
);

const tick = () => new Promise((r) => setTimeout(r, 5));

/** Resolves at the harness's next event, or after `ms` when none comes (a runner can go idle without one). */
function nextEventOf(h: Harness, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      off();
      resolve();
    };
    const timer = setTimeout(done, ms);
    const off = h.bus.subscribe("*", done);
  });
}

async function runHistory(commands: Command[], databases: ReturnType<typeof reusedTestDatabases>): Promise<void> {
  const executions: Execution[] = [];
  const plans = new Map<string, ToolKind[][]>();
  const script: ScriptFunction = (ctx): ScriptStep => {
    const plan = plans.get(ctx.lastUserMessage) ?? [];
    const round = plan[ctx.stepIndex];
    if (!round) return { text: `done ${ctx.lastUserMessage}` };
    return { tool_calls: round.map((t, i) => ({ tool: `ops/${t}`, args: { i } })) };
  };
  const toolset = () => {
    const t = new FnToolset("ops");
    for (const kind of ["safe", "idem", "unsafe", "ask"] as const) {
      t.add(
        kind,
        (_args: unknown, ctx: ToolCallContext) =>
          new Promise<ToolOutcome>((resolve) => {
            const e: Execution = {
              key: ctx.idempotencyKey,
              tool: kind,
              at: Date.now(),
              settled: false,
              settle: (o) => ((e.settled = true), resolve(o)),
            };
            executions.push(e);
            ctx.signal.addEventListener("abort", () => e.settle({ ok: false, kind: "killed", error: "stopped" }), { once: true });
          }),
        { readOnly: kind === "safe", idempotent: kind === "idem" },
      );
    }
    return t;
  };
  const policy = {
    name: "prop",
    rules: [
      { tool: "ops/ask", decision: "ask" as const },
      { tool: "ops/*", decision: "allow" as const },
    ],
  };
  // The test owns the directory: a harness deletes only one it made itself.
  const dir = mkdtempSync(join(tmpdir(), "wardrik-prop-"));
  await databases.next(dir);
  let h: Harness = await createHarness({ toolsets: [toolset()], policy, dir });
  const events = [...h.events];
  const track = (harness: Harness) => harness.bus.subscribe("*", (e) => events.push(e));
  track(h);
  h.script("a", script);
  let agent = await h.agent({ name: "a", tools: ["ops/*"], script, max_iterations: 10 });
  const accepted: string[] = [];
  let sent = 0;
  let record: StoredEvent[] = [];
  try {
    for (const c of commands) {
      if (c.kind === "send") {
        const text = `m${sent++}`;
        plans.set(text, c.rounds);
        accepted.push((await h.runtime.enqueue(agent, `c${c.conversation}`, text)).message);
      } else if (c.kind === "settle") {
        const open = executions.filter((e) => !e.settled);
        const e = open[c.pick % Math.max(1, open.length)];
        e?.settle(c.ok ? { ok: true, output: `${e.tool} ok` } : { ok: false, error: `${e.tool} failed` });
      } else if (c.kind === "decide") {
        const waiting = await h.store.calls.waiting(agent.id);
        const call = waiting[c.pick % Math.max(1, waiting.length)];
        if (call) {
          if (c.approve) await h.runtime.approve(agent, call.id).catch(() => undefined);
          else await h.runtime.deny(agent, call.id, "no").catch(() => undefined);
        }
      } else if (c.kind === "kill") {
        const running = events.filter((e) => e.type === "dev.wardrik.call.started").map((e) => String(e.data.call));
        const id = running[c.pick % Math.max(1, running.length)];
        if (id) await h.runtime.kill(agent, id).catch(() => undefined);
      } else {
        await h.runtime.close();
        await h.store.db.close();
        // Whatever the tools were doing, the crashed process never hears of it.
        for (const e of executions) e.settled = true;
        h = await createHarness({ toolsets: [toolset()], policy, dir });
        track(h);
        h.script("a", script);
        agent = (await h.store.agents.get(agent.id))!;
        await h.runtime.recover();
      }
      await tick();
    }
    // Drain: finish every open execution and approve every waiting call until every turn has ended.
    const until = Date.now() + 20_000;
    for (;;) {
      // Listening before the look: an event that comes while it reads is not missed.
      const changed = nextEventOf(h, 20);
      for (const e of executions) if (!e.settled) e.settle({ ok: true, output: "late ok" });
      for (const w of await h.store.calls.waiting(agent.id)) await h.runtime.approve(agent, w.id).catch(() => undefined);
      // Idle only when nothing runs here and the database agrees (the two reads are not one snapshot).
      const busy = h.runtime.awake(agent.id)?.busy ?? false;
      const open = await h.store.turns.open(agent.id);
      const queued = await h.store.inputs.conversationsWithQueued(agent.id);
      if (!busy && open.length === 0 && queued.length === 0 && !(h.runtime.awake(agent.id)?.busy ?? false)) break;
      if (Date.now() > until) throw new Error(`turns still open: ${JSON.stringify(open.map((t) => t.status))}`);
      await changed;
    }
    // What the database holds once the runtime has stopped: the record the invariants are checked against.
    await h.runtime.close();
    record = await h.store.events.list(agent.id, 0, 1_000_000);
  } finally {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const short = (t: string) => t.replace("dev.wardrik.", "");

  // Every accepted message is in exactly one turn.
  const started = record.filter((e) => short(e.type) === "turn.started");
  for (const m of accepted) expect(started.filter((e) => (e.data.messages as string[]).includes(m))).toHaveLength(1);
  // A conversation has one open turn at a time.
  const conversationOf = new Map(started.map((e) => [e.run, String(e.data.conversation_id)]));
  const openIn = new Map<string, number>();
  for (const e of record) {
    const delta = short(e.type) === "turn.started" ? 1 : /^turn\.(completed|failed|cancelled)$/.test(short(e.type)) ? -1 : 0;
    if (delta === 0 || e.run === undefined) continue;
    const conversation = conversationOf.get(e.run)!;
    openIn.set(conversation, (openIn.get(conversation) ?? 0) + delta);
    expect(openIn.get(conversation), `open turns in ${conversation} at event ${e.seq}`).toBeLessThanOrEqual(1);
  }
  // Every turn ends.
  const ended = new Set(record.filter((e) => /^turn\.(completed|failed|cancelled)$/.test(short(e.type))).map((e) => e.run));
  for (const s of started) expect(ended.has(s.run), `turn ${s.run} ended`).toBe(true);
  // A completed call never runs again; an unsafe one never twice without an approval.
  for (const done of record.filter((e) => short(e.type) === "call.completed")) {
    const key = String(done.data.call);
    const at = Date.parse(done.time);
    expect(executions.filter((x) => x.key === key && x.at > at + 50)).toEqual([]);
  }
  for (const key of new Set(executions.filter((x) => UNSAFE.has(x.tool)).map((x) => x.key))) {
    const runs = executions.filter((x) => x.key === key);
    const approvals = record.filter((e) => short(e.type) === "approval.granted" && e.data.call === key).length;
    // The policy lets `unsafe` run once on its own; `ask` runs only when a person says so.
    const free = runs[0]!.tool === "unsafe" ? 1 : 0;
    expect(runs.length, `unsafe call ${key}`).toBeLessThanOrEqual(free + approvals);
  }
}

/**
 * Histories that failed once, run every time on both databases: the first is
 * fast-check's (seed -2023243980, path "10:25:5", in CI); the second came
 * from a run with random delays added to every PostgreSQL statement. Each
 * sends a message just as the conversation's runner was taking the queued
 * ones for its next turn: on PostgreSQL the message started a second open
 * turn beside it, and after the crash only one of the two was driven; the
 * other stayed running for good. They fail only when the send lands in that
 * moment, so whether they catch it again depends on the machine's timing;
 * turn-loop.test.ts makes that race happen every time.
 */
const FOUND: Command[][] = [
  [
    { kind: "settle", pick: 2084534855, ok: false },
    { kind: "settle", pick: 1365492209, ok: true },
    { kind: "send", conversation: 0, rounds: [["ask", "idem", "safe"]] },
    { kind: "settle", pick: 361323027, ok: false },
    { kind: "send", conversation: 0, rounds: [["safe", "ask"]] },
    { kind: "settle", pick: 2147483645, ok: true },
    { kind: "settle", pick: 2147483639, ok: true },
    { kind: "settle", pick: 1251571049, ok: true },
    { kind: "decide", pick: 558195628, approve: true },
    { kind: "settle", pick: 23878835, ok: false },
    { kind: "settle", pick: 704807840, ok: false },
    { kind: "settle", pick: 253194008, ok: false },
    { kind: "send", conversation: 0, rounds: [["unsafe"], ["idem", "unsafe", "unsafe"]] },
    { kind: "crash" },
  ],
  [
    { kind: "kill", pick: 108799633 },
    { kind: "settle", pick: 832104911, ok: false },
    { kind: "settle", pick: 1532948838, ok: false },
    {
      kind: "send",
      conversation: 0,
      rounds: [
        ["unsafe", "idem"],
        ["safe", "ask", "safe"],
      ],
    },
    { kind: "send", conversation: 0, rounds: [] },
    { kind: "decide", pick: 239130456, approve: false },
    { kind: "settle", pick: 1281634330, ok: false },
    { kind: "decide", pick: 1116677630, approve: true },
    { kind: "send", conversation: 1, rounds: [] },
    { kind: "settle", pick: 1912756648, ok: false },
    { kind: "settle", pick: 1043619571, ok: true },
    { kind: "send", conversation: 1, rounds: [["idem", "unsafe", "unsafe"]] },
    {
      kind: "send",
      conversation: 1,
      rounds: [
        ["unsafe", "ask"],
        ["safe", "safe"],
      ],
    },
    { kind: "kill", pick: 1577870185 },
    { kind: "crash" },
    { kind: "send", conversation: 1, rounds: [["unsafe", "ask"]] },
  ],
];

describe("turn and call lifecycles under random histories", () => {
  it("keep their invariants through approvals, kills and crashes", async () => {
    const databases = reusedTestDatabases();
    await fc.assert(
      // Fewer, longer histories than 25 of 3 to 25 commands (about 220 commands in all either way): each history pays
      // for a database, a harness and a drain, and a long one also reaches states a short one cannot.
      fc.asyncProperty(fc.array(command, { minLength: 10, maxLength: 50 }), (commands) => runHistory(commands, databases)),
      { numRuns: 12, interruptAfterTimeLimit: 120_000, examples: FOUND.map((history) => [history]) },
    );
  }, 180_000);
});
