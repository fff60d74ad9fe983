/**
 * `npm run bench -- telemetry [RUNS]` (after `npm run build`): W1 (100
 * conversations x 10 turns, one tool call a turn, the runtime in process on
 * SQLite) in three set-ups, each run in a fresh process, the set-ups taking
 * turns so the machine's drift falls on all of them:
 *
 * - bare:   the runtime as on main, without telemetry (the engine's no-op, no metrics);
 * - off:    what the daemon runs when no telemetry is configured: the metrics
 *           (counters on the event bus, the commit-time histogram) and the no-op tracing;
 * - traces: off plus traces exported over OTLP http/protobuf to a local
 *           receiver (a separate process that reads and acknowledges each request).
 *
 * Prints one JSON line: the medians of each set-up and the overheads against bare.
 * Targets (issue #18): traces at most 10 % slower than without; off, nothing measurable.
 * `npm run bench -- telemetry one MODE` runs one set-up once and prints its JSON line.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createScriptedModel } from "@wardrik/testing";
import {
  EventBus,
  FilesToolset,
  Runtime,
  SqliteDb,
  Store,
  ToolRegistry,
  WardrikMetrics,
  startDaemonTelemetry,
  systemClock,
  ulidIds,
  type DaemonTelemetry,
  type RuntimeHooks,
} from "wardrik";
import { agentDef, fastTool, percentile, turnEnd } from "./lib.js";

type Mode = "bare" | "off" | "traces";
const MODES: Mode[] = ["bare", "off", "traces"];
const CONVERSATIONS = 100;
const TURNS = 10;

if (process.argv[2] === "one") {
  await one(process.argv[3] as Mode, process.env.BENCH_OTLP_URL);
} else {
  await compare(Number(process.argv[2] ?? 5));
}

/** Runs every set-up `runs` times, alternating, against one receiver process. */
async function compare(runs: number): Promise<void> {
  const receiver = await startReceiver();
  const results: Record<Mode, Record<string, number>[]> = { bare: [], off: [], traces: [] };
  try {
    for (let i = 0; i < runs; i++) {
      const order = [...MODES.slice(i % 3), ...MODES.slice(0, i % 3)];
      for (const mode of order) {
        const r = spawnSync(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), "one", mode], {
          env: { ...process.env, BENCH_OTLP_URL: receiver.url },
          encoding: "utf8",
          stdio: ["ignore", "pipe", "inherit"],
        });
        if (r.status !== 0) throw new Error(`bench telemetry one ${mode} failed (${r.status})`);
        results[mode].push(JSON.parse(r.stdout.trim().split("\n").at(-1)!) as Record<string, number>);
      }
    }
  } finally {
    receiver.stop();
  }
  const median = (mode: Mode, key: string) => {
    const xs = results[mode].map((x) => x[key]!).sort((a, b) => a - b);
    return xs[Math.floor(xs.length / 2)]!;
  };
  const summary = (mode: Mode) => ({
    turns_per_s: median(mode, "turns_per_s"),
    cpu_ms_per_turn: median(mode, "cpu_ms_per_turn"),
    p50_ms: median(mode, "p50_ms"),
    p99_ms: median(mode, "p99_ms"),
    statements_per_turn: median(mode, "statements_per_turn"),
  });
  const overhead = (mode: Mode) => round((median("bare", "turns_per_s") / median(mode, "turns_per_s") - 1) * 100, 1);
  const cpuOverhead = (mode: Mode) => round((median(mode, "cpu_ms_per_turn") / median("bare", "cpu_ms_per_turn") - 1) * 100, 1);
  console.log(
    JSON.stringify({
      workload: "W1",
      turns: CONVERSATIONS * TURNS,
      runs,
      bare: summary("bare"),
      off: summary("off"),
      traces: { ...summary("traces"), export_requests_per_run: median("traces", "export_requests") },
      // Extra time per turn against bare, in percent of bare's (from the medians of turns per second).
      off_overhead_pct: overhead("off"),
      traces_overhead_pct: overhead("traces"),
      // The same from the process's CPU time per turn: steadier on a machine others share.
      off_cpu_overhead_pct: cpuOverhead("off"),
      traces_cpu_overhead_pct: cpuOverhead("traces"),
      all_turns_per_s: Object.fromEntries(MODES.map((m) => [m, results[m].map((x) => x.turns_per_s)])),
      all_cpu_ms_per_turn: Object.fromEntries(MODES.map((m) => [m, results[m].map((x) => x.cpu_ms_per_turn)])),
    }),
  );
}

/** One W1 run in one set-up. */
async function one(mode: Mode, otlpUrl: string | undefined): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "wardrik-bench-telemetry-"));
  const db = new SqliteDb(join(dir, "bench.db"), { synchronous: "NORMAL" });
  const bus = new EventBus();
  const metrics = mode === "bare" ? undefined : new WardrikMetrics();
  const store = new Store(db, bus, ulidIds(), systemClock, metrics ? { onCommit: metrics.commitTook } : {});
  let telemetry: DaemonTelemetry | undefined;
  if (metrics) {
    // OTEL_* variables of the bench's own environment (a sampler, a batch size) apply to the traced runs.
    const own = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("OTEL_")));
    const env = mode === "traces" ? { OTEL_SERVICE_NAME: "wardrik-bench", ...own, OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl } : {};
    telemetry = await startDaemonTelemetry(undefined, env, {
      store,
      bus,
      metrics,
      log: () => undefined,
      redact: (t) => t,
      addSecret: () => undefined,
      workerConnections: () => new Map(),
      version: "bench",
    });
    if (mode === "traces" && !telemetry.tracing.settings) throw new Error("traces are not on");
  }
  const model = createScriptedModel(
    { steps: [{ tool_calls: [{ tool: "bench/lookup", args: { id: "id_0" } }] }, { text: "done" }] },
    { modelId: "bench" },
  );
  const hooks: RuntimeHooks = {
    resolveModel: () => ({ ref: "script/bench", model, price: { input: 0.15, output: 0.6 } }),
    decide: () => ({ decision: "allow", reason: "bench" }),
    budget: () => ({}),
  };
  const registry = new ToolRegistry();
  registry.add(new FilesToolset(db, systemClock));
  registry.add(fastTool);
  const runtime = new Runtime(store, registry, hooks, telemetry ? { telemetry: telemetry.tracing.telemetry } : {});
  const agent = await runtime.createAgent("default", agentDef("bench"));
  const ended = turnEnd(bus, agent.id);
  const oneTurn = async (conversation: string) => {
    const t0 = performance.now();
    const q = await runtime.enqueue(agent, conversation, "go");
    const end = await ended(q.message);
    if (end.type !== "dev.wardrik.turn.completed") throw new Error(`turn failed: ${JSON.stringify(end.data)}`);
    return performance.now() - t0;
  };

  for (let i = 0; i < 50; i++) await oneTurn(`warm-${i % 5}`);
  const stats0 = { ...db.stats };
  const latencies: number[] = [];
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  for (let c = 0; c < CONVERSATIONS; c++) for (let t = 0; t < TURNS; t++) latencies.push(await oneTurn(`c${c}`));
  const seconds = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const statements = db.stats.statements - stats0.statements;
  const flushStart = performance.now();
  await runtime.close();
  await telemetry?.close();
  const flushMs = performance.now() - flushStart;
  // The scrape works and counted the measured turns (and the warm-up's).
  const text = metrics ? await metrics.render() : "";
  if (metrics && !/wardrik_turns_total\{org="default",agent="bench",outcome="completed"\} 1050\n/.test(text)) {
    throw new Error(`the metrics did not count the turns:\n${text.slice(0, 2000)}`);
  }
  await db.close();
  rmSync(dir, { recursive: true, force: true });
  latencies.sort((a, b) => a - b);
  const turns = CONVERSATIONS * TURNS;
  const export_requests = mode === "traces" ? await exportRequests(otlpUrl!) : 0;
  console.log(
    JSON.stringify({
      mode,
      turns,
      seconds: round(seconds, 3),
      turns_per_s: round(turns / seconds, 1),
      cpu_ms_per_turn: round((cpu.user + cpu.system) / 1000 / turns, 3),
      p50_ms: round(percentile(latencies, 50), 3),
      p99_ms: round(percentile(latencies, 99), 3),
      statements_per_turn: round(statements / turns, 2),
      close_ms: round(flushMs, 1),
      export_requests,
    }),
  );
}

/**
 * The local receiver: its own process (as a collector would be), answering
 * every OTLP request with 200 after reading it, and counting the bytes and
 * requests. GET /count answers the requests taken since the last GET.
 */
async function startReceiver(): Promise<{ url: string; stop(): void }> {
  const code = `
    const http = require("node:http");
    let requests = 0;
    const server = http.createServer((req, res) => {
      if (req.method === "GET") { res.end(String(requests)); requests = 0; return; }
      req.on("data", () => {});
      req.on("end", () => { requests++; res.writeHead(200, { "content-type": "application/x-protobuf" }).end(); });
    });
    server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"));
  `;
  const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding("utf8").once("data", (d: string) => resolve(d.trim()));
    child.once("exit", (c) => reject(new Error(`the receiver exited (${c})`)));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill("SIGKILL") };
}

/** Export requests the receiver took since the last ask (the SDK batches up to 512 spans a request). */
async function exportRequests(url: string): Promise<number> {
  return Number(await (await fetch(`${url}/count`)).text());
}

function round(n: number, d: number): number {
  const f = 10 ** d;
  return Math.round(n * f) / f;
}
