/**
 * `npm run bench -- faults [N] [SEED]` (after `npm run build`): the kill
 * harness on one daemon. N SIGKILLs of the daemon in all (default 20), in
 * runs of up to 10: each run starts a project, a real worker process
 * (packages/daemon/test/faults/fixtures/fault-worker.ts) and the built
 * daemon, then takes its kills in a row (send 1-3 messages to 1-2
 * conversations, kill the daemon at a random moment within the turns'
 * expected span, start it again, approve the calls that wait with the
 * lost-answer reason: the person), and is counted from ground truth: the
 * daemon's record against the worker's own log of every execution
 * (packages/daemon/test/faults/single-node-faults.ts, fault-ledger.ts).
 *
 * Everything random (turn shapes, message counts, kill delays) comes from
 * one PRNG per run, seeded SEED * 1000 + run: a seed replays the same kills.
 *
 * Prints one JSON line per run ({"run":i,"seed":...,"kills":...,counts,"failures":[...]}),
 * then the total: {"workload":"faults","seed":S,"kills":K,"accepted":A,"lost":0,
 *  "completed_reruns":0,"unsafe_reruns_without_approval":0,"asked_about_finished":0,
 *  "effects_run_twice":0,...,"policy_approvals":P,"failures":[...],"totals":{...}}
 * Every other kill lands around a person's approval of a call a policy asks
 * about (policy_approvals: the asks the person approved).
 */
import { addCounts, NO_COUNTS } from "../packages/daemon/test/faults/fault-ledger.js";
import { planKills, singleNodeFaultRun } from "../packages/daemon/test/faults/single-node-faults.js";

const KILLS = Number(process.argv[2] ?? 20);
const SEED = Number(process.argv[3] ?? 1);
const PER_RUN = 10;
if (!Number.isInteger(KILLS) || KILLS < 1 || !Number.isInteger(SEED)) {
  console.error("usage: npm run bench -- faults [N kills, default 20] [SEED, an integer, default 1]");
  process.exit(2);
}

/** What the kills hit, summed over the runs (from checkInvariants' stats). */
const totals = { turns: 0, calls: 0, executions: 0, safe_reruns: 0, lost_answer_approvals: 0, lost_results: 0 };
const failures: string[] = [];
let counts = NO_COUNTS;
let kills = 0;
let empty = 0;
let policyApprovals = 0;
const t0 = performance.now();
for (let run = 0; kills < KILLS; run++) {
  const seed = SEED * 1000 + run;
  const r = await singleNodeFaultRun(planKills(Math.min(PER_RUN, KILLS - kills), seed));
  kills += r.kills;
  counts = addCounts(counts, r.counts);
  if (r.stats) for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += r.stats[k];
  failures.push(...r.failures.map((f) => `run ${run} (seed ${seed}): ${f.slice(0, 240)}`));
  policyApprovals += r.policyApprovals;
  const runFailures = r.failures.map((f) => f.slice(0, 240));
  console.log(JSON.stringify({ run, seed, kills: r.kills, ...r.counts, policy_approvals: r.policyApprovals, failures: runFailures }));
  // A run that ended in an error made fewer kills than asked: the next runs make up the rest, unless three in a row
  // landed none (a worker that cannot start on a machine this busy, say).
  empty = r.kills === 0 ? empty + 1 : 0;
  if (empty >= 3) break;
}
console.log(
  JSON.stringify({
    workload: "faults",
    seed: SEED,
    kills,
    ...counts,
    policy_approvals: policyApprovals,
    failures,
    totals,
    seconds: Number(((performance.now() - t0) / 1000).toFixed(1)),
  }),
);
