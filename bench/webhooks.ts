/**
 * `npm run bench -- webhooks [TURNS]`: what webhook subscribers cost.
 *
 * The daemon's runtime in this process (SQLite on disk, WAL, the scripted
 * model, as W1), with the daemon's events-out wiring (EventsIO: the outbox
 * written in each event's transaction, the sender beside the turns) and a
 * real HTTP receiver on 127.0.0.1 that answers 200.
 *
 * 1. W1 (100 conversations x 10 turns, one tool call each) without any
 *    subscriber, with the example subscriber (turn.completed,
 *    approval.requested, agent.*: about one delivery per turn), and with one
 *    that wants every event (about eleven per turn), the sender running while
 *    the turns run; twice each, alternating, best of each. `added_cost_pct`
 *    is the turns/s the example subscriber costs. Target: under 5 %.
 *    `*_pending_at_end` counts deliveries not yet sent when the last turn
 *    ended (a sender that fell behind would look cheap).
 * 2. Deliveries per second: TURNS (default 200) turns over 8 agents with the
 *    sender stopped, then the sender is started and the backlog timed until
 *    the receiver has every delivery (8 queues: each agent's events go out in
 *    order, one at a time per subscriber).
 *
 * Prints one JSON line.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createScriptedModel } from "@wardrik/testing";
import type { ProjectConfig } from "../packages/daemon/src/config/types.js";
import { EventBus, type StoredEvent } from "../packages/daemon/src/events/event-bus.js";
import { EventsIO } from "../packages/daemon/src/events-io.js";
import { systemClock, ulidIds } from "../packages/daemon/src/ids.js";
import { Runtime } from "../packages/daemon/src/runtime/runtime.js";
import type { RuntimeHooks } from "../packages/daemon/src/runtime/types.js";
import { SecretRedactor } from "../packages/daemon/src/secrets/redactor.js";
import type { SecretStore } from "../packages/daemon/src/store/secrets.js";
import { SqliteDb } from "../packages/daemon/src/store/sqlite-db.js";
import { Store } from "../packages/daemon/src/store/store.js";
import { ToolRegistry } from "../packages/daemon/src/tools/tool-registry.js";
import { agentDef, fastTool } from "./lib.js";

const BACKLOG_TURNS = Number(process.argv[2] ?? 200);
const BACKLOG_AGENTS = 8;

let received = 0;
const receiver: Server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    received++;
    res.writeHead(200).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

interface Setup {
  runtime: Runtime;
  store: Store;
  bus: EventBus;
  events: EventsIO;
  close(): Promise<void>;
}

/** No subscriber, the example subscriber (turn ends, approvals, agent changes), or one that wants every event. */
type Subscription = "none" | "example" | "all";

function setup(subscription: Subscription): Setup {
  const dir = mkdtempSync(join(tmpdir(), "wardrik-bench-"));
  const db = new SqliteDb(join(dir, "bench.db"), { synchronous: "NORMAL" });
  const bus = new EventBus();
  const ids = ulidIds();
  // Only what EventsIO reads of a project: its org and subscribers (as config.yaml's defaults make them).
  const subscribers = {
    none: [],
    example: [{ url, types: ["turn.completed", "approval.requested", "agent.*"], retry_for: 86_400, timeout: 10 }],
    all: [{ url, retry_for: 86_400, timeout: 10 }],
  }[subscription];
  const config = { org: "default", subscribers } as unknown as ProjectConfig;
  const events = new EventsIO({
    config,
    db,
    ids,
    clock: systemClock,
    log: (level, msg, fields) => {
      if (level === "error" || level === "warn") console.error(level, msg, JSON.stringify(fields));
    },
    redactor: new SecretRedactor(),
    // No trigger here refers to a secret.
    secrets: undefined as unknown as SecretStore,
    env: {},
    userAgent: "wardrik-bench",
  });
  const store = new Store(db, bus, ids, systemClock, { onEventsWritten: events.onEventsWritten });
  const model = createScriptedModel(
    { steps: [{ tool_calls: [{ tool: "bench/lookup", args: { id: "x" } }] }, { text: "done" }] },
    { modelId: "bench" },
  );
  const hooks: RuntimeHooks = {
    resolveModel: () => ({ ref: "script/bench", model, price: { input: 0.15, output: 0.6 } }),
    decide: () => ({ decision: "allow", reason: "bench" }),
    budget: () => ({}),
  };
  const registry = new ToolRegistry();
  registry.add(fastTool);
  const runtime = new Runtime(store, registry, hooks, {});
  events.attach(store, runtime, bus);
  return {
    runtime,
    store,
    bus,
    events,
    close: async () => {
      await events.close();
      await runtime.close();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves each message's turn end (by the message IDs turn.started lists). */
function turnEnds(bus: EventBus): (message: string) => Promise<StoredEvent> {
  const waiting = new Map<string, (e: StoredEvent) => void>();
  const ended = new Map<string, StoredEvent>();
  const messagesOf = new Map<string, string[]>();
  bus.subscribe("*", (e) => {
    if (e.type === "dev.wardrik.turn.started") messagesOf.set(e.run!, e.data.messages as string[]);
    else if (e.type === "dev.wardrik.turn.completed" || e.type === "dev.wardrik.turn.failed") {
      for (const m of messagesOf.get(e.run!) ?? []) {
        const w = waiting.get(m);
        if (w) {
          waiting.delete(m);
          w(e);
        } else ended.set(m, e);
      }
      messagesOf.delete(e.run!);
    }
  });
  return (message) => {
    const done = ended.get(message);
    if (done) {
      ended.delete(message);
      return Promise.resolve(done);
    }
    return new Promise((resolve) => waiting.set(message, resolve));
  };
}

/** W1 on a fresh setup: turns per second. */
async function w1(subscription: Subscription): Promise<{ turnsPerS: number; deliveries: number; waiting: number }> {
  const s = setup(subscription);
  const agent = await s.runtime.createAgent("default", agentDef("bench"));
  await s.events.start();
  const ended = turnEnds(s.bus);
  const turn = async (conversation: string) => {
    const q = await s.runtime.enqueue(agent, conversation, "go");
    const end = await ended(q.message);
    if (end.type !== "dev.wardrik.turn.completed") throw new Error(`turn failed: ${JSON.stringify(end.data)}`);
    // The scripted model and SQLite never wait for I/O, so a turn alone never lets timers and sockets run; a
    // daemon's turns do (models, HTTP). One yield per turn, in every variant, lets the sender work beside them.
    await new Promise((r) => setImmediate(r));
  };
  for (let i = 0; i < 50; i++) await turn(`warm-${i % 5}`);
  const start = performance.now();
  for (let c = 0; c < 100; c++) for (let t = 0; t < 10; t++) await turn(`c${c}`);
  const seconds = (performance.now() - start) / 1000;
  const all = await s.events.deliveries.list("default", { limit: 100_000 });
  await s.close();
  // Sent while the turns ran, not left for later: the cost is in the turns/s.
  return { turnsPerS: 1000 / seconds, deliveries: all.length, waiting: all.filter((d) => d.status === "pending").length };
}

/** A backlog of deliveries over BACKLOG_AGENTS agents, then the time to send it all. */
async function drain(): Promise<{ deliveries: number; seconds: number }> {
  const s = setup("all");
  const agents = await Promise.all(
    Array.from({ length: BACKLOG_AGENTS }, (_, i) => s.runtime.createAgent("default", agentDef(`bench-${i}`))),
  );
  const ended = turnEnds(s.bus);
  for (let i = 0; i < BACKLOG_TURNS; i++) {
    const q = await s.runtime.enqueue(agents[i % BACKLOG_AGENTS]!, `c${i}`, "go");
    await ended(q.message);
  }
  const deliveries = (await s.events.deliveries.list("default", { limit: 100_000 })).length;
  received = 0;
  const start = performance.now();
  await s.events.start();
  while (received < deliveries) await new Promise((r) => setTimeout(r, 5));
  const seconds = (performance.now() - start) / 1000;
  // Every delivery is recorded as delivered before the run counts as done.
  while ((await s.events.deliveries.list("default", { status: "pending", limit: 1 })).length > 0)
    await new Promise((r) => setTimeout(r, 5));
  await s.close();
  return { deliveries, seconds };
}

const best: Record<Subscription, number> = { none: 0, example: 0, all: 0 };
const perRun: Record<Subscription, number> = { none: 0, example: 0, all: 0 };
const waiting: Record<Subscription, number> = { none: 0, example: 0, all: 0 };
for (let round = 0; round < 2; round++) {
  for (const sub of ["none", "example", "all"] as const) {
    const r = await w1(sub);
    best[sub] = Math.max(best[sub], r.turnsPerS);
    perRun[sub] = r.deliveries;
    waiting[sub] = Math.max(waiting[sub], r.waiting);
  }
}
const backlog = await drain();
receiver.close();

const cost = (sub: Subscription) => round(((best.none - best[sub]) / best.none) * 100, 2);
console.log(
  JSON.stringify({
    workload: "webhooks",
    w1_turns_per_s: round(best.none, 1),
    w1_example_subscriber_turns_per_s: round(best.example, 1),
    added_cost_pct: cost("example"),
    example_deliveries_per_turn: round(perRun.example / 1050, 2),
    example_pending_at_end: waiting.example,
    w1_all_events_subscriber_turns_per_s: round(best.all, 1),
    all_events_added_cost_pct: cost("all"),
    all_events_deliveries_per_turn: round(perRun.all / 1050, 2),
    all_events_pending_at_end: waiting.all,
    backlog_deliveries: backlog.deliveries,
    backlog_agents: BACKLOG_AGENTS,
    deliveries_per_s: round(backlog.deliveries / backlog.seconds, 1),
  }),
);

function round(n: number, d: number): number {
  const f = 10 ** d;
  return Math.round(n * f) / f;
}
