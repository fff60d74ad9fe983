/**
 * `npm run bench -- faults [N] [seed]` (after `npm run build`): the randomised
 * fault-injection run on one daemon. N trials (default 20), one SIGKILL of the
 * daemon each; each starts a project, a real worker process
 * (packages/daemon/test/faults/fixtures/fault-worker.ts) and the built daemon,
 * sends 1-3 messages to 1-2 conversations, kills the daemon at a random moment
 * within the turns' expected span, restarts it, approves the calls that wait
 * with the lost-answer reason (the person), and counts from ground truth: the
 * daemon's record against the worker's own log of every execution
 * (packages/daemon/test/faults/single-node-faults.ts, fault-ledger.ts).
 *
 * Everything random (turn shapes, message counts, kill delays) comes from one
 * PRNG seeded with `seed`: the same seed gives the same trials and kill delays.
 * The kill delay is measured from the moment the last message was accepted.
 *
 * Prints one JSON line per trial ({"trial":i,...counts}), then the total:
 * {"workload":"faults","trials":N,"seed":S,"kills":K,"accepted":A,"lost":0,
 *  "completed_reruns":0,"unsafe_reruns_without_approval":0,"asked_about_finished":F,
 *  "effects_run_twice":0,...,"passed":P,"failed":F,"failures":[...]}
 */
import { addCounts, NO_COUNTS } from "../packages/daemon/test/faults/fault-ledger.js";
import { planTrials, runTrial } from "../packages/daemon/test/faults/single-node-faults.js";

const trials = Number(process.argv[2] ?? 20);
const seed = Number(process.argv[3] ?? 1);
if (!Number.isInteger(trials) || trials < 1 || !Number.isInteger(seed)) {
  console.error("usage: npm run bench -- faults [N trials, default 20] [seed, an integer, default 1]");
  process.exit(2);
}

/** What the kills hit, summed over the trials (from checkInvariants' stats). */
const totals = { turns: 0, calls: 0, executions: 0, safe_reruns: 0, lost_answer_approvals: 0, lost_results: 0 };
const plans = planTrials(trials, seed);
const failures: string[] = [];
let counts = NO_COUNTS;
let kills = 0;
let passed = 0;
const t0 = performance.now();
for (let i = 0; i < trials; i++) {
  const p = plans[i]!;
  const r = await runTrial(p);
  kills += r.kills;
  counts = addCounts(counts, r.counts);
  if (r.stats) for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += r.stats[k];
  if (r.failures.length === 0) passed += 1;
  else {
    const more = r.failures.length > 1 ? ` (+${r.failures.length - 1} more)` : "";
    failures.push(`trial ${i} (kill after ${p.killDelayMs} ms): ${r.failures[0]!.slice(0, 240)}${more}`);
  }
  console.log(JSON.stringify({ trial: i, kill_delay_ms: p.killDelayMs, kills: r.kills, ...r.counts, problems: r.failures.length }));
  if (process.env.WARDRIK_BENCH_VERBOSE) console.error(`trial ${i}: ${r.failures.length === 0 ? "ok" : r.failures.join("; ")}`);
}
console.log(
  JSON.stringify({
    workload: "faults",
    trials,
    seed,
    kills,
    ...counts,
    passed,
    failed: trials - passed,
    failures,
    totals,
    seconds: Number(((performance.now() - t0) / 1000).toFixed(1)),
  }),
);
