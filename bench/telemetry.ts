/**
 * `npm run bench -- telemetry [RUNS]`: what telemetry costs a W1 turn (100
 * conversations x 10 turns, one tool call a turn, the runtime in process on
 * SQLite), in three set-ups:
 *
 * - bare:   the runtime without telemetry (the engine's no-op, no metrics);
 * - off:    what the daemon runs when no telemetry is configured: the metrics
 *           (counters on the event bus, the commit-time histogram) and the no-op tracing;
 * - traces: off plus traces exported over OTLP http/protobuf to a local
 *           receiver (a process of its own, as a collector would be, that reads
 *           and acknowledges each request).
 *
 * Between turns the run goes back to the event loop, as a daemon does between
 * requests, so spans are exported during the passes (the receiver counts the
 * requests). The figure is the process's CPU time a turn (process.cpuUsage: every thread
 * of it, the exporter's and the garbage collector's included), steadier than
 * turns a second on a machine others share; on Linux the main thread's own
 * share is given too (what the turn's code costs, without the collector's and
 * compiler's threads). Each run is a fresh process that
 * runs W1 five times: the first pass ("cold") pays for compiling the code it
 * runs (more code with traces), three more are not measured (V8 goes on
 * compiling hot code on background threads for a few thousand turns), the
 * last ("warm") is a daemon that has been up a while; the targets of issue #18 (traces at most 10 % more than bare, off
 * nothing measurable) are read on the warm pass. The set-ups take turns, RUNS
 * rounds (default 9), each round in another order, so the machine's drift
 * falls on all of them; the JSON line gives the medians, the overheads (from
 * the medians and, steadier, the median of each round's own ratio) and the
 * spread of bare's runs, the noise any overhead is to be read against.
 *
 * The receiver is asked for its count between passes with node:http: fetch
 * would detach an ArrayBuffer, and a process where one was detached loses a
 * V8 fast path (a "protector") for every typed array and Buffer from then on;
 * the JSON line lists any fast path a set-up's process lost
 * (`protectors_lost`), which should be none for all three.
 *
 * `npm run bench -- telemetry one MODE` runs one set-up once (BENCH_OTLP_URL:
 * the receiver) and prints its JSON line; BENCH_CPU_PROFILE=FILE also writes
 * a CPU profile of its warm pass.
 */
import { spawn, spawnSync } from "node:child_process";
import { get } from "node:http";
import { fileURLToPath } from "node:url";
import { percentile } from "./lib.js";
import { MODES, mainThreadCpuMs, setUp, type Mode } from "./telemetry-setup.js";

const CONVERSATIONS = 100;
const TURNS = 10;
/** W1 passes between the cold and the warm one, unmeasured (WARDRIK_BENCH_WARM_PASSES, default 3). */
const WARM_PASSES = Number(process.env.WARDRIK_BENCH_WARM_PASSES ?? 3);

/** One pass of W1, as `one` reports it. */
interface Pass {
  seconds: number;
  turns_per_s: number;
  cpu_ms_per_turn: number;
  /** The main thread's share (Linux, 10 ms ticks): the rest is the garbage collector's and the compiler's threads. */
  main_thread_cpu_ms_per_turn: number | null;
  p50_ms: number;
  p99_ms: number;
  statements_per_turn: number;
}
interface Run {
  mode: Mode;
  cold: Pass;
  warm: Pass;
  close_ms: number;
  export_requests: { cold: number; warm: number; at_close: number };
}

if (process.argv[2] === "one") {
  await one(process.argv[3] as Mode, process.env.BENCH_OTLP_URL);
} else {
  await compare(Number(process.argv[2] ?? 9));
}

/** Runs every set-up `runs` times, taking turns, against one receiver process. */
async function compare(runs: number): Promise<void> {
  const receiver = await startReceiver();
  const rounds: Record<Mode, Run>[] = [];
  const protectorsLost: Record<Mode, Set<string>> = { bare: new Set(), off: new Set(), traces: new Set() };
  try {
    for (let i = 0; i < runs; i++) {
      const round: Partial<Record<Mode, Run>> = {};
      for (const mode of [...MODES.slice(i % 3), ...MODES.slice(0, i % 3)]) {
        round[mode] = child<Run>(["one", mode], receiver.url, protectorsLost[mode]);
      }
      rounds.push(round as Record<Mode, Run>);
    }
  } finally {
    receiver.stop();
  }
  const figures = (mode: Mode, pass: "cold" | "warm", key: keyof Pass) => rounds.map((r) => r[mode][pass][key] ?? NaN);
  const summary = (mode: Mode, pass: "cold" | "warm") => ({
    cpu_ms_per_turn: median(figures(mode, pass, "cpu_ms_per_turn")),
    main_thread_cpu_ms_per_turn: median(figures(mode, pass, "main_thread_cpu_ms_per_turn")),
    turns_per_s: median(figures(mode, pass, "turns_per_s")),
    p50_ms: median(figures(mode, pass, "p50_ms")),
    p99_ms: median(figures(mode, pass, "p99_ms")),
    statements_per_turn: median(figures(mode, pass, "statements_per_turn")),
  });
  // CPU a turn more than bare's, in percent: from the medians, and the median of each round's own ratio.
  const overhead = (mode: Mode, pass: "cold" | "warm") => {
    const cpu = (m: Mode) => figures(m, pass, "cpu_ms_per_turn");
    return {
      cpu_pct: pct(median(cpu(mode)) / median(cpu("bare"))),
      cpu_paired_pct: pct(median(rounds.map((r) => r[mode][pass].cpu_ms_per_turn / r.bare[pass].cpu_ms_per_turn))),
      // The main thread alone: what the turn's own code costs, without the collector's and compiler's threads.
      main_thread_paired_pct: pct(
        median(rounds.map((r) => (r[mode][pass].main_thread_cpu_ms_per_turn ?? NaN) / (r.bare[pass].main_thread_cpu_ms_per_turn ?? NaN))),
      ),
      wall_pct: pct(median(figures("bare", pass, "turns_per_s")) / median(figures(mode, pass, "turns_per_s"))),
    };
  };
  const bareCpu = figures("bare", "warm", "cpu_ms_per_turn");
  const warm = { off: overhead("off", "warm"), traces: overhead("traces", "warm") };
  console.log(
    JSON.stringify({
      workload: "W1",
      turns: CONVERSATIONS * TURNS,
      runs,
      figure: "process CPU ms a turn, warm pass (cold: the first W1 of a fresh process)",
      targets: { traces_pct_max: 10, off: "within bare's own spread" },
      traces_cpu_overhead_pct: warm.traces.cpu_paired_pct,
      off_cpu_overhead_pct: warm.off.cpu_paired_pct,
      // How far bare's own runs lie apart (interquartile range, percent of the median): the noise.
      bare_cpu_spread_pct: round(((quantile(bareCpu, 0.75) - quantile(bareCpu, 0.25)) / median(bareCpu)) * 100, 1),
      warm: { bare: summary("bare", "warm"), off: summary("off", "warm"), traces: summary("traces", "warm"), overhead: warm },
      cold: {
        bare: summary("bare", "cold"),
        off: summary("off", "cold"),
        traces: summary("traces", "cold"),
        overhead: { off: overhead("off", "cold"), traces: overhead("traces", "cold") },
      },
      // Spans go out during the passes, not all at the end (512 a request).
      export_requests_per_warm_pass: median(rounds.map((r) => r.traces.export_requests.warm)),
      // V8 fast paths each set-up's process lost (should be none, and the same for all three).
      protectors_lost: Object.fromEntries(Object.entries(protectorsLost).map(([m, lost]) => [m, [...lost]])),
      all_warm_cpu_ms_per_turn: Object.fromEntries(MODES.map((m) => [m, figures(m, "warm", "cpu_ms_per_turn")])),
    }),
  );
}

/** A fresh process: W1 twice (cold, then warm) in one set-up. */
async function one(mode: Mode, otlpUrl: string | undefined): Promise<void> {
  const w1 = await setUp(mode, otlpUrl);
  const { db, metrics } = w1;
  /** W1 on conversations of its own. */
  const pass = async (name: string, profile: boolean): Promise<Pass> => {
    const profiler = profile ? await startProfile() : undefined;
    const stats0 = db.stats.statements;
    const latencies: number[] = [];
    const main0 = mainThreadCpuMs();
    const cpu0 = process.cpuUsage();
    const start = performance.now();
    for (let c = 0; c < CONVERSATIONS; c++) for (let t = 0; t < TURNS; t++) latencies.push(await w1.turn(`${name}-${c}`));
    const seconds = (performance.now() - start) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const main1 = mainThreadCpuMs();
    await profiler?.();
    latencies.sort((a, b) => a - b);
    const turns = CONVERSATIONS * TURNS;
    return {
      seconds: round(seconds, 3),
      turns_per_s: round(turns / seconds, 1),
      cpu_ms_per_turn: round((cpu.user + cpu.system) / 1000 / turns, 3),
      main_thread_cpu_ms_per_turn: main0 === null || main1 === null ? null : round((main1 - main0) / turns, 3),
      p50_ms: round(percentile(latencies, 50), 3),
      p99_ms: round(percentile(latencies, 99), 3),
      statements_per_turn: round((db.stats.statements - stats0) / turns, 2),
    };
  };

  // Export requests the receiver took during each pass (asked between passes, outside the measured time).
  const exported = async () => (mode === "traces" ? await exportRequests(otlpUrl!) : 0);
  await exported();
  const cold = await pass("cold", false);
  // Then unmeasured passes, as W1 warms up 4,000 turns: V8 compiles hot code on background threads for the first
  // few thousand turns, whose CPU counts in the process's, and traces add code to compile.
  for (let i = 0; i < WARM_PASSES; i++) await pass(`warming-${i}`, false);
  const coldRequests = await exported();
  const warm = await pass("warm", true);
  const warmRequests = await exported();
  const flushStart = performance.now();
  await w1.stop();
  const flushMs = performance.now() - flushStart;
  // The scrape works and counted every turn.
  const text = metrics ? await metrics.render() : "";
  if (
    metrics &&
    !text.includes(`wardrik_turns_total{org="default",agent="bench",outcome="completed"} ${(2 + WARM_PASSES) * CONVERSATIONS * TURNS}\n`)
  ) {
    throw new Error(`the metrics did not count the turns:\n${text.slice(0, 2000)}`);
  }
  await w1.remove();
  const run: Run = {
    mode,
    cold,
    warm,
    close_ms: round(flushMs, 1),
    export_requests: { cold: coldRequests, warm: warmRequests, at_close: await exported() },
  };
  console.log(JSON.stringify(run));
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

/**
 * Export requests the receiver took since the last ask (up to 512 spans a request).
 * Asked with node:http, not fetch: fetch's web streams detach an ArrayBuffer, which turns off one of V8's
 * fast paths (the ArrayBufferDetaching protector) for every typed array and Buffer of the process for good.
 * Asked of the traced runs only, through fetch that cost them several percent that bare and off did not pay.
 */
function exportRequests(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(`${url}/count`, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve(Number(body)));
    }).on("error", reject);
  });
}

/**
 * A child process of this benchmark, with V8 saying when the process loses one of its global fast paths
 * ("protectors"): a set-up that loses one the others keep pays for it in every turn, whatever it does itself,
 * so the JSON line names any that went. Returns the child's last line, parsed.
 */
function child<T>(args: string[], otlpUrl: string, lost: Set<string>): T {
  const r = spawnSync(process.execPath, ["--trace-protector-invalidation", fileURLToPath(import.meta.url), ...args], {
    env: { ...process.env, BENCH_OTLP_URL: otlpUrl },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`bench telemetry ${args.join(" ")} failed (${r.status})`);
  const lines = r.stdout.trim().split("\n");
  for (const line of lines) {
    const name = /^Invalidating protector cell (\w+)/.exec(line)?.[1];
    if (name) lost.add(name);
  }
  return JSON.parse(lines.at(-1)!) as T;
}

function median(xs: number[]): number {
  return quantile(xs, 0.5);
}

/** The q-quantile of xs, linear between neighbours. */
function quantile(xs: number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  return sorted[lo]! + (sorted[Math.min(lo + 1, sorted.length - 1)]! - sorted[lo]!) * (at - lo);
}

/** A ratio as percent more (negative: less). */
function pct(ratio: number): number {
  return round((ratio - 1) * 100, 1);
}

function round(n: number, d: number): number {
  const f = 10 ** d;
  return Math.round(n * f) / f;
}

/** BENCH_CPU_PROFILE=FILE: a CPU profile of the warm pass only (not start-up, the cold pass or the flush); self time by function shows where a turn goes. */
async function startProfile(): Promise<(() => Promise<void>) | undefined> {
  const file = process.env.BENCH_CPU_PROFILE;
  if (!file) return undefined;
  const { Session } = await import("node:inspector/promises");
  const { writeFileSync } = await import("node:fs");
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 50 });
  await session.post("Profiler.start");
  return async () => {
    const { profile } = await session.post("Profiler.stop");
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  };
}
