/**
 * One daemon, one worker, SIGKILLs of the daemon at seeded random moments:
 * the trials of `npm run bench -- faults` and of its short pass in CI
 * (kill-harness.test.ts). Each trial makes a project, starts the built daemon
 * and a real fault worker, sends 1-3 messages to 1-2 conversations, kills the
 * daemon within the turns' expected span, starts it again, approves what waits
 * with the lost-answer reason (the person), and counts from ground truth
 * (fault-ledger.ts) and the invariants of SPEC section 5 (checkInvariants).
 * No vitest here.
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

export interface TrialPlan {
  shape: TurnShape;
  messages: { text: string; conversation: string }[];
  killDelayMs: number;
}

export interface TrialResult {
  kills: number;
  counts: FaultCounts;
  stats: CheckStats | undefined;
  /** Broken promises (checkInvariants), asks with an unexpected reason, or the error that ended the trial. */
  failures: string[];
}

/** The plans of `trials` trials, drawn up front from one PRNG: the same seed gives the same trials. */
export function planTrials(trials: number, seed: number): TrialPlan[] {
  const rand = seededRandom(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  return Array.from({ length: trials }, (_, i) => {
    const shape: TurnShape = {
      model1Ms: int(0, 400),
      model2Ms: int(0, 400),
      toolMs: { lookup: int(20, 800), upsert: int(20, 800), charge: int(20, 800) },
    };
    const conversations = int(1, 2);
    const count = int(1, 3);
    const messages = Array.from({ length: count }, (_, k) => ({ text: `t${i}-m${k}`, conversation: `c${k % conversations}` }));
    // One turn per conversation at a time: the span is roughly the longest conversation's turns in a row.
    const perTurn = shape.model1Ms! + Math.max(...Object.values(shape.toolMs!)) + shape.model2Ms! + 50;
    return { shape, messages, killDelayMs: int(0, perTurn * Math.ceil(count / conversations)) };
  });
}

/** Runs one trial; `database` is config.yaml's `database:` (default the project's own SQLite file). */
export async function runTrial(p: TrialPlan, database?: string): Promise<TrialResult> {
  let project: StandaloneProject | undefined;
  let worker: FaultWorker | undefined;
  const accepted: string[] = [];
  try {
    project = await standaloneProject({
      files: faultFiles(),
      scripts: { [AGENT]: faultScript(p.shape) },
      ...(database !== undefined ? { database } : {}),
    });
    await project.start();
    worker = startWorker(project, dirname(project.dir));
    await waitForWorker(project, worker.child.pid!);
    const agent = await agentIdOf(project);
    for (const m of p.messages) accepted.push(await send(project, agent, m.text, m.conversation));
    await sleep(p.killDelayMs);
    await project.kill();
    await project.start();
    const settled = await settle(project, agent, accepted, 60_000);
    const report = checkInvariants({ events: settled.events, log: worker.log(), accepted });
    const failures = [
      ...report.failures,
      ...settled.unexpectedApprovals.map((e) => `unexpected approval request for ${String(e.data.call)}: ${String(e.data.reason)}`),
    ];
    return { kills: 1, counts: countFaults({ events: settled.events, logs: worker.log(), accepted }), stats: report.stats, failures };
  } catch (err) {
    // Unsettled: every accepted message counts as lost until shown otherwise.
    const counts = { ...NO_COUNTS, accepted: accepted.length, lost: accepted.length };
    return { kills: 1, counts, stats: undefined, failures: [`error: ${(err as Error).message.split("\n")[0]}`] };
  } finally {
    await worker?.stop();
    await project?.dispose();
  }
}
