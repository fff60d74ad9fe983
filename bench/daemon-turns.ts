// W1, W2 and W4 through the daemon: the built binary, an SDK worker process serving the tool, the client
// posting each message over HTTP and waiting for its turn's end on the agent's SSE stream.
// `node bench/dist/daemon-turns.js W1|W2|W4`; prints one JSON line (workload W1-http, ...).
import { benchProject, startDaemon, turnEnds } from "./daemon-kit.js";
import { percentile } from "./lib.js";

const workload = process.argv[2] ?? "W1";
const spec = {
  W1: { conversations: 100, turns: 10, calls: 1 },
  W2: { conversations: 20, turns: 10, calls: 8 },
  W4: { conversations: 1, turns: 500, calls: 1 },
}[workload];
if (!spec) throw new Error(`unknown workload ${workload}; use W1, W2 or W4`);

const d = await startDaemon(benchProject({ calls: spec.calls }), { worker: true });
try {
  const agent = await d.agentId("bench");
  const turns = turnEnds(d, agent);
  const oneTurn = async (conversation: string, text = "go"): Promise<number> => {
    const t0 = performance.now();
    const q = await d.client.sendMessage(agent, text, conversation);
    const end = await turns.ended(q.message);
    if (!end.type.endsWith(".turn.completed")) throw new Error(`turn failed: ${JSON.stringify(end)}`);
    return performance.now() - t0;
  };
  // Warmed as W1 in process is (bench/turns.ts): the daemon's code compiles on V8's background threads over the
  // first few thousand turns, and that CPU counts in the daemon's; a daemon runs for hours, so the figures are its
  // steady state. WARDRIK_BENCH_WARMUP=50 shows a freshly started one.
  const warmup = Number(process.env.WARDRIK_BENCH_WARMUP ?? 4000);
  for (let i = 0; i < warmup; i++) await oneTurn(`warm-${Math.floor(i / spec.turns)}`);

  const latencies: number[] = [];
  const cpu0 = d.cpuMs();
  const start = performance.now();
  for (let c = 0; c < spec.conversations; c++) {
    for (let t = 0; t < spec.turns; t++) latencies.push(await oneTurn(`c${c}`, `turn ${t}`));
  }
  const seconds = (performance.now() - start) / 1000;
  const cpu = d.cpuMs() - cpu0;
  turns.stop();
  const n = spec.conversations * spec.turns;
  const sorted = [...latencies].sort((a, b) => a - b);
  const p50 = (xs: number[]) =>
    percentile(
      [...xs].sort((a, b) => a - b),
      50,
    );
  const base = {
    workload: `${workload}-http`,
    turns: n,
    warmup_turns: warmup,
    tool_calls_per_turn: spec.calls,
    seconds: round(seconds, 3),
    turns_per_s: round(n / seconds, 1),
    p50_ms: round(percentile(sorted, 50), 3),
    p99_ms: round(percentile(sorted, 99), 3),
    daemon_cpu_ms_per_turn: round(cpu / n, 3),
    daemon_peak_rss_mb: d.rssMb().peak,
    daemon_start_s: round(d.startSeconds, 3),
  };
  const w4 =
    workload === "W4"
      ? (() => {
          const first = p50(latencies.slice(0, 50));
          const last = p50(latencies.slice(-50));
          return { p50_first50_ms: round(first, 3), p50_last50_ms: round(last, 3), ratio: round(last / first, 2) };
        })()
      : {};
  console.log(JSON.stringify({ ...base, ...w4 }));
} finally {
  await d.close();
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
