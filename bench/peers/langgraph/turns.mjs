// W1 and W2 on LangGraph.js, measured as bench/turns.ts measures Wardrik: the same warm-up, then
// conversations one after the other, each turn timed from the user's message to the final text.
import { PeakRss, percentile, round, wardrikWarmup, writtenBytes } from "./measure.mjs";
import { openPeerAgent, peerInfo } from "./peer-agent.mjs";

export async function runTurns(workload, { kind, durability }) {
  const spec = {
    W1: { conversations: 100, turns: 10, calls: 1 },
    W2: { conversations: 20, turns: 10, calls: 8 },
  }[workload];
  const peer = openPeerAgent({ kind, durability, calls: spec.calls });
  const { database } = peer;
  const turnOf = new Map();
  async function oneTurn(conversation) {
    const n = (turnOf.get(conversation) ?? 0) + 1;
    turnOf.set(conversation, n);
    const t0 = performance.now();
    await peer.turn(conversation, n);
    return performance.now() - t0;
  }

  // As bench/turns.ts: V8 compiles hot code during the first few thousand turns and that CPU counts, so the
  // same unmeasured turns first (conversations as long as the measured ones); WARDRIK_BENCH_WARMUP=50 shows the cold figures.
  const warmup = Number(process.env.WARDRIK_BENCH_WARMUP ?? wardrikWarmup());
  for (let i = 0; i < warmup; i++) await oneTurn(`warm-${Math.floor(i / spec.turns)}`);
  const rss = new PeakRss();
  const latencies = [];
  const stats0 = { ...database.stats };
  const bytes0 = database.bytes();
  const written0 = writtenBytes();
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  for (let c = 0; c < spec.conversations; c++) {
    for (let t = 0; t < spec.turns; t++) latencies.push(await oneTurn(`c${c}`));
  }
  const seconds = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const written = writtenBytes() - written0;
  const bytes = database.bytes() - bytes0;
  const statements = database.stats.statements - stats0.statements;
  const commits = database.stats.commits - stats0.commits;
  const peak = rss.stop();
  latencies.sort((a, b) => a - b);
  const turns = spec.conversations * spec.turns;
  const synchronous = { 0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA" }[database.synchronous()];
  if (synchronous !== "NORMAL" || database.journalMode() !== "wal")
    throw new Error(`the checkpointer's database is not WAL with synchronous=NORMAL`);
  await peer.checkHistory(
    Array.from({ length: spec.conversations }, (_, c) => `c${c}`),
    spec.turns,
  );
  console.log(
    JSON.stringify({
      workload,
      ...peerInfo(kind, durability),
      database: "sqlite",
      synchronous,
      turns,
      warmup_turns: warmup,
      tool_calls_per_turn: spec.calls,
      seconds: round(seconds, 3),
      turns_per_s: round(turns / seconds, 1),
      p50_ms: round(percentile(latencies, 50), 3),
      p99_ms: round(percentile(latencies, 99), 3),
      statements_per_turn: round(statements / turns, 2),
      commits_per_turn: round(commits / turns, 2),
      cpu_ms_per_turn: round((cpu.user + cpu.system) / 1000 / turns, 3),
      bytes_written_per_turn: Math.round(written / turns),
      db_bytes_per_turn: Math.round(bytes / turns),
      peak_rss_mb: peak,
    }),
  );
  peer.close();
}
