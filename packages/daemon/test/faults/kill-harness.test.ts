/**
 * The short seeded pass of `npm run bench -- faults` in CI: a few SIGKILLs of
 * the one daemon mid-turn, in a row on one project (single-node-faults.ts),
 * counted from ground truth (fault-ledger.ts): nothing accepted is lost, no
 * completed call runs again, no unsafe call runs twice without a person's
 * approval, and no effect completes twice (the worker outlives the daemon and
 * answers a call it finished from memory). Persons asked about calls that had
 * finished are printed, not asserted: issue 30 points 1-4 (ask the workers
 * first) bring that count to 0. So are the invariants of checkInvariants (a
 * call may fail "No worker serves" when the worker reconnects late, point 3);
 * the other fault tests assert them.
 */
import { expect, it } from "vitest";
import { createTestDatabase } from "../helpers/test-database.js";
import { planKills, singleNodeFaultRun } from "./single-node-faults.js";

const SEED = 11;
const KILLS = 3;

it(
  `${KILLS} seeded kills of the daemon (seed ${SEED}): nothing lost, nothing completed or unsafe ran twice`,
  { timeout: 600_000 },
  async (ctx) => {
    const { url } = await createTestDatabase({ scope: ctx });
    const r = await singleNodeFaultRun(planKills(KILLS, SEED), url);
    console.log(`faults seed ${SEED}: ${JSON.stringify({ kills: r.kills, ...r.counts })}`);
    if (r.failures.length > 0) console.log(`faults seed ${SEED} invariants:\n${r.failures.join("\n")}`);
    expect(r.failures.filter((f) => f.startsWith("error:"))).toEqual([]);
    expect(r.kills).toBe(KILLS);
    expect(r.counts.accepted).toBeGreaterThan(0);
    expect({ lost: r.counts.lost, completed_reruns: r.counts.completed_reruns, unsafe: r.counts.unsafe_reruns_without_approval }).toEqual({
      lost: 0,
      completed_reruns: 0,
      unsafe: 0,
    });
    expect(r.counts.effects_run_twice).toBe(0);
  },
);
