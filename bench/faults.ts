/**
 * `npm run bench -- faults [N] [seed]` (after `npm run build`): the randomised
 * fault-injection run. N trials (default 20); each starts a project, a real
 * worker process (packages/daemon/test/faults/fixtures/fault-worker.ts) and the
 * built daemon, sends 1-3 messages to 1-2 conversations, SIGKILLs the daemon
 * at a random moment within the turns' expected span, restarts it, approves
 * the calls that wait with the lost-answer reason, and checks the invariants
 * of SPEC section 5 from the daemon's record and the worker's own log
 * (checkInvariants in packages/daemon/test/faults/fault-kit.ts).
 *
 * Everything random (turn shapes, message counts, kill delays) comes from one
 * PRNG seeded with `seed`: the same seed gives the same trials and kill delays.
 * The kill delay is measured from the moment the last message was accepted.
 *
 * Prints one JSON line:
 * {"workload":"faults","trials":N,"seed":S,"passed":P,"failed":F,"failures":[...], ...}
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
  type FaultWorker,
  type StandaloneProject,
  type TurnShape,
} from "../packages/daemon/test/faults/fault-kit.js";

const trials = Number(process.argv[2] ?? 20);
const seed = Number(process.argv[3] ?? 1);
if (!Number.isInteger(trials) || trials < 1 || !Number.isInteger(seed)) {
  console.error("usage: npm run bench -- faults [N trials, default 20] [seed, an integer, default 1]");
  process.exit(2);
}

const rand = seededRandom(seed);
const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));

interface TrialPlan {
  shape: TurnShape;
  messages: { text: string; conversation: string }[];
  killDelayMs: number;
}

/** Drawn up front, in order, so a trial's plan never depends on how an earlier one went. */
function plan(i: number): TrialPlan {
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
  const turnsInARow = Math.ceil(count / conversations);
  return { shape, messages, killDelayMs: int(0, perTurn * turnsInARow) };
}

/** What the kills hit, summed over the trials (from checkInvariants' stats). */
const totals = { turns: 0, calls: 0, executions: 0, safe_reruns: 0, lost_answer_approvals: 0, lost_results: 0 };

async function trial(p: TrialPlan): Promise<string[]> {
  let project: StandaloneProject | undefined;
  let worker: FaultWorker | undefined;
  try {
    project = await standaloneProject({ files: faultFiles(), scripts: { [AGENT]: faultScript(p.shape) } });
    await project.start();
    worker = startWorker(project, dirname(project.dir));
    await waitForWorker(project, worker.child.pid!);
    const agent = await agentIdOf(project);
    const accepted: string[] = [];
    for (const m of p.messages) accepted.push(await send(project, agent, m.text, m.conversation));
    await sleep(p.killDelayMs);
    await project.kill();
    await project.start();
    const settled = await settle(project, agent, accepted, 60_000);
    const report = checkInvariants({ events: settled.events, log: worker.log(), accepted });
    for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += report.stats[k];
    const failures = [...report.failures];
    for (const e of settled.unexpectedApprovals)
      failures.push(`unexpected approval request for ${String(e.data.call)}: ${String(e.data.reason)}`);
    return failures;
  } catch (err) {
    return [`error: ${(err as Error).message.split("\n")[0]}`];
  } finally {
    await worker?.stop();
    await project?.dispose();
  }
}

const plans = Array.from({ length: trials }, (_, i) => plan(i));
const failures: string[] = [];
let passed = 0;
const t0 = performance.now();
for (let i = 0; i < trials; i++) {
  const p = plans[i]!;
  const problems = await trial(p);
  if (problems.length === 0) passed += 1;
  else {
    const more = problems.length > 1 ? ` (+${problems.length - 1} more)` : "";
    failures.push(`trial ${i} (kill after ${p.killDelayMs} ms): ${problems[0]!.slice(0, 240)}${more}`);
  }
  if (process.env.WARDRIK_BENCH_VERBOSE)
    console.error(`trial ${i}: kill after ${p.killDelayMs} ms: ${problems.length === 0 ? "ok" : problems.join("; ")}`);
}
console.log(
  JSON.stringify({
    workload: "faults",
    trials,
    seed,
    passed,
    failed: trials - passed,
    failures,
    kill_delays_ms: plans.map((p) => p.killDelayMs),
    totals,
    seconds: Number(((performance.now() - t0) / 1000).toFixed(1)),
  }),
);
