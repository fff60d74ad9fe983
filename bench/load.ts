// Many clients at once through the daemon: each client sends a message to a conversation of its own, waits for the
// turn's end, and sends the next at a steady pace. Two ways of following, one after the other on the same daemon:
// - own:  every client follows its own conversation's events on the agent's stream (one SSE stream per client,
//         `?conversation=` so that the daemon sends it only its own turns);
// - own-all: as own, each stream without the filter (every event of the agent to every client: 50x the writes);
// - feed: the clients share one follower of the org feed (as an application's backend does for its users).
// Prints one JSON line: per way, the daemon's CPU a turn (from /proc of its pid), p50/p99 turn latency, errors.
// `npm run bench -- load [SECONDS] [CLIENTS] [TURNS_PER_S_PER_CLIENT] [own|own-all|feed|both]`; warm-up:
// WARDRIK_BENCH_WARMUP_S (10 s of the same load first). The turn: W1's (one worker lookup, then the answer).
import { loadavg } from "node:os";
import { benchProject, startDaemon, turnEnds, turnEndsOf, type BenchDaemon } from "./daemon-kit.js";
import { percentile } from "./lib.js";

type Ends = ReturnType<typeof turnEnds>;

const seconds = Number(process.argv[2] ?? 30);
const clients = Number(process.argv[3] ?? 50);
const ratePerClient = Number(process.argv[4] ?? 2);
const ways = (process.argv[5] ?? "both") === "both" ? ["own", "feed"] : [process.argv[5]!];
const warmupS = Number(process.env.WARDRIK_BENCH_WARMUP_S ?? 10);
/** A turn not ended this long after its message was accepted counts as an error. */
const TURN_DEADLINE_MS = 30_000;
/** The per-org limits out of reach: the load is one org's, and the figure is the daemon's cost, not its refusals. */
const NO_LIMITS = "\nlimits:\n  org_requests_per_s: 1000000\n  org_running_turns: 1000000\n";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

interface Phase {
  measuring: boolean;
  stopped: boolean;
  latencies: number[];
  errors: Record<string, number>;
}

function countError(phase: Phase, cause: string): void {
  phase.errors[cause] = (phase.errors[cause] ?? 0) + 1;
}

function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("turn_deadline")), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** One client: a turn every 1/ratePerClient s in its conversation (at once again when a turn took longer). */
async function client(d: BenchDaemon, agent: string, conversation: string, ends: Ends, phase: Phase): Promise<void> {
  const interval = 1000 / ratePerClient;
  let next = performance.now() + Math.random() * interval;
  for (let n = 0; !phase.stopped; n++) {
    const wait = next - performance.now();
    if (wait > 0) await sleep(wait);
    next = Math.max(next + interval, performance.now());
    if (phase.stopped) break;
    const counted = phase.measuring;
    const t0 = performance.now();
    try {
      const q = await d.client.sendMessage(agent, `turn ${n}`, conversation, { idempotencyKey: null });
      const end = await withDeadline(ends.ended(q.message), TURN_DEADLINE_MS);
      if (!end.type.endsWith(".turn.completed")) throw new Error(end.type);
      if (counted && phase.measuring) phase.latencies.push(performance.now() - t0);
    } catch (err) {
      if (counted) countError(phase, err instanceof Error ? err.message.slice(0, 80) : String(err));
    }
  }
}

async function measure(d: BenchDaemon, agent: string, way: string) {
  const phase: Phase = { measuring: false, stopped: false, latencies: [], errors: {} };
  const streamFailed = (err: unknown) => countError(phase, `stream: ${err instanceof Error ? err.message.slice(0, 60) : String(err)}`);
  const { last_seq } = await d.client.events(agent, { limit: 1 });
  const conversations = Array.from({ length: clients }, (_, c) => `${way}-${c}`);
  let shared: Ends | undefined;
  if (way === "feed") shared = turnEndsOf((signal) => d.client.followOrg({ signal }), streamFailed);
  else if (way !== "own" && way !== "own-all") throw new Error(`unknown way ${way}; use own, own-all, feed or both`);
  const streams = conversations.map(
    (conversation) => shared ?? turnEnds(d, agent, { after: last_seq, ...(way === "own" ? { conversation } : {}) }, streamFailed),
  );
  const running = conversations.map((conversation, c) => client(d, agent, conversation, streams[c]!, phase));
  await sleep(warmupS * 1000);
  const cpu0 = d.cpuMs();
  const own0 = process.cpuUsage();
  const t0 = performance.now();
  phase.measuring = true;
  await sleep(seconds * 1000);
  phase.measuring = false;
  const cpu = d.cpuMs() - cpu0;
  const ownCpu = process.cpuUsage(own0);
  const elapsed = (performance.now() - t0) / 1000;
  phase.stopped = true;
  await Promise.all(running);
  for (const s of new Set(streams)) s.stop();
  const sorted = [...phase.latencies].sort((a, b) => a - b);
  const turns = sorted.length;
  return {
    streams: way === "feed" ? 1 : clients,
    turns,
    turns_per_s: round(turns / elapsed, 1),
    daemon_cpu_ms_per_turn: round(cpu / Math.max(1, turns), 3),
    daemon_cpu_share: round(cpu / (elapsed * 1000)),
    // The clients' process (this one): on a machine short of cores, its work delays the turns too.
    clients_cpu_share: round((ownCpu.user + ownCpu.system) / 1000 / (elapsed * 1000)),
    p50_ms: round(percentile(sorted, 50)),
    p99_ms: round(percentile(sorted, 99)),
    errors: Object.values(phase.errors).reduce((a, b) => a + b, 0),
    error_causes: phase.errors,
  };
}

const load = loadavg().map((x) => round(x));
const d = await startDaemon(benchProject({ calls: 1 }), { worker: true, config: (text) => text + NO_LIMITS });
try {
  const agent = await d.agentId("bench");
  const results: Record<string, unknown> = {};
  for (const way of ways) results[way] = await measure(d, agent, way);
  console.log(
    JSON.stringify({
      workload: "load",
      seconds,
      warmup_s: warmupS,
      clients,
      turns_per_s_per_client: ratePerClient,
      goal: { daemon_cpu_ms_per_turn: 3, p99_ms: 100, errors: 0 },
      load_avg_at_start: load,
      ...results,
    }),
  );
} finally {
  await d.close();
}
