/**
 * The short seeded pass of `npm run bench -- faults` in CI: a few SIGKILLs of
 * the one daemon in a row on one project (single-node-faults.ts), mid-turn
 * or around a person's approval of an unsafe call a policy asks about,
 * counted from ground truth (fault-ledger.ts): nothing accepted is lost, no
 * completed call runs again, no unsafe call runs twice without a person's
 * approval of a lost answer, no person is asked about a call the worker had
 * finished, and no effect completes twice, approved or not (the worker
 * outlives the daemon and answers from memory). The invariants of
 * checkInvariants are printed, not asserted (a call may fail "No worker
 * serves" when the worker reconnects late); the other fault tests assert them.
 */
import { expect, it } from "vitest";
import { createTestDatabase } from "../helpers/test-database.js";
import { planKills, singleNodeFaultRun } from "./single-node-faults.js";

const SEED = 11;
const KILLS = 3;

it(
  `${KILLS} seeded kills of the daemon (seed ${SEED}): mid-turn and around approvals: nothing lost, nothing ran twice, nobody asked about a finished call`,
  { timeout: 600_000 },
  async (ctx) => {
    const { url } = await createTestDatabase({ scope: ctx });
    const r = await singleNodeFaultRun(planKills(KILLS, SEED), url);
    console.log(`faults seed ${SEED}: ${JSON.stringify({ kills: r.kills, ...r.counts, policy_approvals: r.policyApprovals })}`);
    if (r.failures.length > 0) console.log(`faults seed ${SEED} invariants:\n${r.failures.join("\n")}`);
    expect(r.failures.filter((f) => f.startsWith("error:"))).toEqual([]);
    expect(r.kills).toBe(KILLS);
    expect(r.counts.accepted).toBeGreaterThan(0);
    expect({ lost: r.counts.lost, completed_reruns: r.counts.completed_reruns, unsafe: r.counts.unsafe_reruns_without_approval }).toEqual({
      lost: 0,
      completed_reruns: 0,
      unsafe: 0,
    });
    expect({ asked_about_finished: r.counts.asked_about_finished, effects_run_twice: r.counts.effects_run_twice }).toEqual({
      asked_about_finished: 0,
      effects_run_twice: 0,
    });
    // The pass went through the person: a kill landed around an approval, and the person approved the asks.
    expect(planKills(KILLS, SEED).some((p) => p.approval)).toBe(true);
    expect(r.policyApprovals).toBeGreaterThan(0);
  },
);
