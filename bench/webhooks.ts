/**
 * `npm run bench -- webhooks [TURNS]`: what webhook subscribers cost.
 *
 * The daemon's runtime in this process (SQLite on disk, WAL, the scripted
 * model, as W1), with the daemon's events-out wiring (EventsIO: the outbox
 * written in each event's transaction, the sender beside the turns) and a
 * real HTTP receiver on 127.0.0.1, in a process of its own, that answers 200.
 *
 * 1. W1 (100 conversations x 10 turns, one tool call each) without any
 *    subscriber, with the issue's example subscriber (turn.completed,
 *    approval.requested, agent.*: about one delivery per turn), and with one
 *    that wants every event (about eleven per turn), the sender running while
 *    the turns run; five times each, alternating. Costs are this process's
 *    CPU time (all its threads) per turn, from the first turn until every
 *    delivery of those turns has been sent and recorded: a sender that falls
 *    behind pays for its backlog within the figure. The least of the rounds
 *    is reported (turns/s, best of the rounds, is printed too, but on a
 *    shared machine other processes move it by tens of percent).
 *    `added_cost_pct` is what the example subscriber adds. Target: under 5 %.
 *    `outbox_only_*` is the example subscriber with its sender stopped: what
 *    the turns' own transactions pay for the outbox rows, without the
 *    sending that shares the process and the SQLite writer with them.
 *    `*_pending_at_last_turn` counts deliveries not yet sent when the last
 *    turn ended (sent after it, within the figure); `*_commits_per_turn` are
 *    SQLite commits (turns and sender together; W1 alone makes 4).
 * 2. Deliveries per second: TURNS (default 200) turns over 8 agents with the
 *    sender stopped, then the sender is started and the backlog timed until
 *    the receiver has every delivery (8 queues: each agent's events go out in
 *    order, one at a time per subscriber), with the CPU per delivery of the
 *    sender working alone (no turns beside it).
 *
 * Prints one JSON line.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createScriptedModel } from "@wardrik/testing";
import {
  EventBus,
  EventsIO,
  Runtime,
  SqliteDb,
  Store,
  ToolRegistry,
  systemClock,
  ulidIds,
  type EventsIOOptions,
  type StoredEvent,
} from "wardrik";
import { agentDef, benchHooks, fastTool } from "./lib.js";

const BACKLOG_TURNS = Number(process.argv[2] ?? 200);
const BACKLOG_AGENTS = 8;

// The receiver runs in its own process, as a subscriber's would: its HTTP work is not the daemon's cost.
const receiverProcess = spawn(
  process.execPath,
  [
    "-e",
    `let n = 0;
     const server = require("node:http").createServer((req, res) => { req.resume(); req.on("end", () => { n++; res.writeHead(200).end(); }); });
     server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"));
     process.on("message", () => process.send(n));`,
  ],
  { stdio: ["ignore", "pipe", "inherit", "ipc"] },
);
const port = await new Promise<number>((resolve) => receiverProcess.stdout!.once("data", (d: Buffer) => resolve(Number(String(d).trim()))));
const url = `http://127.0.0.1:${port}/hook`;
/** How many requests the receiver has answered. */
function received(): Promise<number> {
  return new Promise((resolve) => {
    receiverProcess.once("message", (n) => resolve(n as number));
    receiverProcess.send("count");
  });
}

interface Setup {
  db: SqliteDb;
  runtime: Runtime;
  store: Store;
  bus: EventBus;
  events: EventsIO;
  close(): Promise<void>;
}

/** No subscriber, the example subscriber (turn ends, approvals, agent changes), or one that wants every event. */
type Subscription = "none" | "example" | "all";
/** The example subscriber with its sender stopped: only what the turns' own transactions pay (the outbox rows). */
type Variant = Subscription | "outbox";

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
  const config = { org: "default", subscribers } as unknown as EventsIOOptions["config"];
  const events = new EventsIO({
    config,
    db,
    ids,
    clock: systemClock,
    log: (level, msg, fields) => {
      if (level === "error" || level === "warn") console.error(level, msg, JSON.stringify(fields));
    },
    // Nothing here is secret, and no trigger refers to a secret.
    redactor: { redact: (t: string) => t } as unknown as EventsIOOptions["redactor"],
    secrets: undefined as unknown as EventsIOOptions["secrets"],
    env: {},
    userAgent: "wardrik-bench",
  });
  const store = new Store(db, bus, ids, systemClock, { onEventsWritten: events.onEventsWritten });
  const model = createScriptedModel(
    { steps: [{ tool_calls: [{ tool: "bench/lookup", args: { id: "x" } }] }, { text: "done" }] },
    { modelId: "bench" },
  );
  const registry = new ToolRegistry();
  registry.add(fastTool);
  const runtime = new Runtime(store, registry, benchHooks(model), {});
  events.attach(store, runtime, bus);
  return {
    db,
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

/** W1 on a fresh setup: turns per second, and CPU per turn until its deliveries are all sent. */
async function w1(
  variant: Variant,
): Promise<{ turnsPerS: number; cpuUsPerTurn: number; deliveries: number; waiting: number; commitsPerTurn: number }> {
  const s = setup(variant === "outbox" ? "example" : variant);
  const agent = await s.runtime.createAgent("default", agentDef("bench"));
  if (variant !== "outbox") await s.events.start();
  const ended = turnEnds(s.bus);
  const turn = async (conversation: string) => {
    const q = await s.runtime.enqueue(agent, conversation, "go");
    const end = await ended(q.message);
    if (end.type !== "dev.wardrik.turn.completed") throw new Error(`turn failed: ${JSON.stringify(end.data)}`);
    // The scripted model and SQLite never wait for I/O, so a turn alone never lets timers and sockets run; a
    // daemon's turns do (models, HTTP). One yield per turn, in every variant, lets the sender work beside them.
    await new Promise((r) => setImmediate(r));
  };
  const pending = async () => (await s.events.deliveries.list("default", { status: "pending", limit: 1 })).length > 0;
  for (let i = 0; i < 50; i++) await turn(`warm-${i % 5}`);
  while (variant !== "outbox" && (await pending())) await new Promise((r) => setTimeout(r, 5));
  const before = variant === "outbox" ? 0 : (await s.events.deliveries.list("default", { limit: 100_000 })).length;
  const commits = s.db.stats.commits;
  const start = performance.now();
  const cpu0 = process.cpuUsage();
  for (let c = 0; c < 100; c++) for (let t = 0; t < 10; t++) await turn(`c${c}`);
  const seconds = (performance.now() - start) / 1000;
  const waiting = variant === "outbox" ? 0 : (await s.events.deliveries.list("default", { status: "pending", limit: 100_000 })).length;
  // Every delivery of these turns sent and recorded: its cost is in the figure even when sent after the last turn.
  while (variant !== "outbox" && (await pending())) await new Promise((r) => setTimeout(r, 5));
  const cpu = process.cpuUsage(cpu0);
  const commitsPerTurn = (s.db.stats.commits - commits) / 1000;
  const all = await s.events.deliveries.list("default", { limit: 100_000 });
  await s.close();
  return {
    turnsPerS: 1000 / seconds,
    cpuUsPerTurn: (cpu.user + cpu.system) / 1000,
    deliveries: all.length - before,
    waiting,
    commitsPerTurn,
  };
}

/** A backlog of deliveries over BACKLOG_AGENTS agents, then the time to send it all. */
async function drain(): Promise<{ deliveries: number; seconds: number; cpuUs: number }> {
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
  const before = await received();
  const start = performance.now();
  const cpu0 = process.cpuUsage();
  await s.events.start();
  while ((await received()) - before < deliveries) await new Promise((r) => setTimeout(r, 5));
  const seconds = (performance.now() - start) / 1000;
  // Every delivery is recorded as delivered before the run counts as done.
  while ((await s.events.deliveries.list("default", { status: "pending", limit: 1 })).length > 0)
    await new Promise((r) => setTimeout(r, 5));
  const cpu = process.cpuUsage(cpu0);
  await s.close();
  return { deliveries, seconds, cpuUs: cpu.user + cpu.system };
}

const ROUNDS = 5;
const best: Record<Variant, number> = { none: 0, outbox: 0, example: 0, all: 0 };
/** CPU time of this process per turn (the least of the rounds): other processes' load barely moves it, unlike turns/s. */
const cpu: Record<Variant, number> = { none: Infinity, outbox: Infinity, example: Infinity, all: Infinity };
const perRun: Record<Variant, number> = { none: 0, outbox: 0, example: 0, all: 0 };
const waiting: Record<Variant, number> = { none: 0, outbox: 0, example: 0, all: 0 };
const commits: Record<Variant, number> = { none: 0, outbox: 0, example: 0, all: 0 };
const rounds: Record<Variant, number[]> = { none: [], outbox: [], example: [], all: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const sub of ["none", "outbox", "example", "all"] as const) {
    const r = await w1(sub);
    best[sub] = Math.max(best[sub], r.turnsPerS);
    cpu[sub] = Math.min(cpu[sub], r.cpuUsPerTurn);
    rounds[sub].push(Math.round(r.cpuUsPerTurn));
    perRun[sub] = r.deliveries;
    waiting[sub] = Math.max(waiting[sub], r.waiting);
    commits[sub] = Math.max(commits[sub], r.commitsPerTurn);
  }
}
const backlog = await drain();
receiverProcess.kill();

const cost = (sub: Variant) => round(((cpu[sub] - cpu.none) / cpu.none) * 100, 2);
console.log(
  JSON.stringify({
    workload: "webhooks",
    w1_turns_per_s: round(best.none, 1),
    w1_cpu_us_per_turn: round(cpu.none, 1),
    outbox_only_cpu_us_per_turn: round(cpu.outbox, 1),
    outbox_only_added_cost_pct: cost("outbox"),
    example_turns_per_s: round(best.example, 1),
    example_cpu_us_per_turn: round(cpu.example, 1),
    added_cost_pct: cost("example"),
    example_deliveries_per_turn: round(perRun.example / 1000, 2),
    example_pending_at_last_turn: waiting.example,
    example_commits_per_turn: round(commits.example, 3),
    all_events_turns_per_s: round(best.all, 1),
    all_events_cpu_us_per_turn: round(cpu.all, 1),
    all_events_added_cost_pct: cost("all"),
    all_events_deliveries_per_turn: round(perRun.all / 1000, 2),
    all_events_pending_at_last_turn: waiting.all,
    all_events_commits_per_turn: round(commits.all, 3),
    rounds_cpu_us_per_turn: rounds,
    backlog_deliveries: backlog.deliveries,
    backlog_agents: BACKLOG_AGENTS,
    deliveries_per_s: round(backlog.deliveries / backlog.seconds, 1),
    backlog_cpu_us_per_delivery: round(backlog.cpuUs / backlog.deliveries, 1),
  }),
);

function round(n: number, d: number): number {
  const f = 10 ** d;
  return Math.round(n * f) / f;
}
