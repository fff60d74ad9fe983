/**
 * One daemon, one worker, SIGKILLs of the daemon at seeded random moments:
 * the runs of `npm run bench -- faults` and of its short pass in CI
 * (kill-harness.test.ts). A run makes a project, starts the built daemon and
 * a real fault worker, then takes its kills in a row: each sends 1-3
 * messages to 1-2 conversations, kills the daemon within the turns' expected
 * span, starts it again, approves what waits with the lost-answer reason (the
 * person) until those turns have ended, and waits for the worker to be back.
 * At the end the run is counted from ground truth (fault-ledger.ts) and
 * checked against the invariants of SPEC section 5 (checkInvariants). No
 * vitest here.
 */
import { dirname } from "node:path";
import {
  agentIdOf,
  checkInvariants,
  faultFiles,
  faultScript,
  AGENT,
  send,
  settle,
  seededRandom,
  sleep,
  standaloneProject,
  startWorker,
  waitForWorker,
  type CheckStats,
  type FaultWorker,
  type StandaloneProject,
  type TurnShape,
} from "./fault-kit.js";
import { countFaults, NO_COUNTS, type FaultCounts } from "./fault-ledger.js";

/** One kill of a run: the turns' shape, the messages sent before it, and how long after the last was accepted it lands. */
export interface KillPlan {
  shape: TurnShape;
  messages: { text: string; conversation: string }[];
  killDelayMs: number;
}

export interface RunResult {
  kills: number;
  counts: FaultCounts;
  stats: CheckStats | undefined;
  /** Broken promises (checkInvariants), asks with an unexpected reason, or the error that ended the run. */
  failures: string[];
}

/** The plans of `kills` kills, drawn up front from one PRNG: the same seed gives the same kills. */
export function planKills(kills: number, seed: number): KillPlan[] {
  const rand = seededRandom(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  return Array.from({ length: kills }, (_, i) => {
    const shape: TurnShape = {
      model1Ms: int(0, 400),
      model2Ms: int(0, 400),
      toolMs: { lookup: int(20, 800), upsert: int(20, 800), charge: int(20, 800) },
    };
    const conversations = int(1, 2);
    const count = int(1, 3);
    // Messages name their kill: its shape is the script's scenario for that prefix.
    const messages = Array.from({ length: count }, (_, k) => ({ text: `k${i}-m${k}`, conversation: `c${k % conversations}` }));
    // One turn per conversation at a time: the span is roughly the longest conversation's turns in a row.
    const perTurn = shape.model1Ms! + Math.max(...Object.values(shape.toolMs!)) + shape.model2Ms! + 50;
    return { shape, messages, killDelayMs: int(0, perTurn * Math.ceil(count / conversations)) };
  });
}

/** Runs `plans` as the kills of one project; `database` is config.yaml's `database:` (default the project's own SQLite file). */
export async function singleNodeFaultRun(plans: readonly KillPlan[], database?: string): Promise<RunResult> {
  let project: StandaloneProject | undefined;
  let worker: FaultWorker | undefined;
  const accepted: string[] = [];
  const unexpected: string[] = [];
  let kills = 0;
  try {
    const byPrefix = Object.fromEntries(plans.map((p, i) => [`k${i}`, p.shape]));
    project = await standaloneProject({
      files: faultFiles(),
      scripts: { [AGENT]: faultScript(plans[0]?.shape, byPrefix) },
      ...(database !== undefined ? { database } : {}),
    });
    await project.start();
    worker = startWorker(project, dirname(project.dir));
    await waitForWorker(project, worker.child.pid!);
    const agent = await agentIdOf(project);
    for (const p of plans) {
      for (const m of p.messages) accepted.push(await send(project, agent, m.text, m.conversation));
      await sleep(p.killDelayMs);
      await project.kill();
      kills += 1;
      await project.start();
      const settled = await settle(project, agent, accepted, 60_000);
      unexpected.push(
        ...settled.unexpectedApprovals.map((e) => `unexpected approval request for ${String(e.data.call)}: ${String(e.data.reason)}`),
      );
      // The next kill starts with the worker connected again, as the first did.
      await waitForWorker(project, worker.child.pid!, 30_000);
    }
    const events = (await settle(project, agent, accepted, 60_000)).events;
    const report = checkInvariants({ events, log: worker.log(), accepted });
    const failures = [...report.failures, ...new Set(unexpected)];
    return { kills, counts: countFaults({ events, logs: worker.log(), accepted }), stats: report.stats, failures };
  } catch (err) {
    // Unsettled: every accepted message counts as lost until shown otherwise.
    const counts = { ...NO_COUNTS, accepted: accepted.length, lost: accepted.length };
    return { kills, counts, stats: undefined, failures: [`error: ${(err as Error).message.split("\n")[0]}`] };
  } finally {
    await worker?.stop();
    await project?.dispose();
  }
}
