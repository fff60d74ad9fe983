/**
 * The short seeded pass of `npm run bench -- faults` in CI: a few SIGKILLs of
 * the one daemon mid-turn (single-node-faults.ts), counted from ground truth
 * (fault-ledger.ts): nothing accepted is lost, no completed call runs again,
 * no unsafe call runs twice without a person's approval, and no effect
 * completes twice (the worker outlives the daemon and answers a call it
 * finished from memory). Persons asked about calls that had finished are
 * printed, not asserted: issue 30 points 1-4 (ask the workers first) bring
 * that count to 0. So are the invariants of checkInvariants (a call may fail
 * "No worker serves" when the worker reconnects late, point 3); the other
 * fault tests assert them.
 */
import { expect, it } from "vitest";
import { createTestDatabase } from "../helpers/test-database.js";
import { addCounts, NO_COUNTS } from "./fault-ledger.js";
import { planTrials, runTrial } from "./single-node-faults.js";

const SEED = 11;
const TRIALS = 3;

it(
  `${TRIALS} seeded kills of the daemon (seed ${SEED}): nothing lost, nothing completed or unsafe ran twice`,
  { timeout: 600_000 },
  async (ctx) => {
    let counts = NO_COUNTS;
    const failures: string[] = [];
    for (const [i, plan] of planTrials(TRIALS, SEED).entries()) {
      const { url } = await createTestDatabase({ scope: ctx });
      const r = await runTrial(plan, url);
      counts = addCounts(counts, r.counts);
      failures.push(...r.failures.map((f) => `trial ${i}: ${f}`));
    }
    console.log(`faults seed ${SEED}: ${JSON.stringify(counts)}`);
    if (failures.length > 0) console.log(`faults seed ${SEED} invariants:\n${failures.join("\n")}`);
    expect(failures.filter((f) => /^trial \d+: error:/.test(f))).toEqual([]);
    expect(counts.accepted).toBeGreaterThan(0);
    expect({ lost: counts.lost, completed_reruns: counts.completed_reruns, unsafe: counts.unsafe_reruns_without_approval }).toEqual({
      lost: 0,
      completed_reruns: 0,
      unsafe: 0,
    });
    expect(counts.effects_run_twice).toBe(0);
  },
);
