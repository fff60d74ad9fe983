/**
 * One daemon, one worker, SIGKILLs of the daemon at seeded random moments:
 * the runs of `npm run bench -- faults` and of its short pass in CI
 * (kill-harness.test.ts). A run makes a project, starts the built daemon and
 * a real fault worker, then takes its kills in a row: each sends 1-3
 * messages to 1-2 conversations, kills the daemon within the turns' expected
 * span, starts it again, approves what waits with the lost-answer reason (the
 * person) until those turns have ended, and waits for the worker to be back.
 * Every other kill lands around a person's approval instead: its messages go
 * to an agent whose policy asks before `charge`, and the daemon dies while
 * the first ask waits, or at a random moment after the person approved it
 * (before the call is sent, while it runs, after it ended). At the end the
 * run is counted from ground truth (fault-ledger.ts) and checked against the
 * invariants of SPEC section 5 (checkInvariants). No vitest here.
 */
import { dirname } from "node:path";
import { sleep } from "../helpers/wait.js";
import { agentMarkdown, faultFiles, faultScript, AGENT, type TurnShape } from "./fault-agent.js";
import { agentIdOf, api, eventsOf, send, short, waitUntil, type FaultEvent } from "./fault-api.js";
import { checkInvariants, type CheckStats } from "./fault-invariants.js";
import { isPolicyAsk, settle } from "./fault-settle.js";
import { startWorker, waitForWorker, type FaultWorker } from "./fault-worker-process.js";
import { seededRandom } from "./seeded-random.js";
import { standaloneProject, type StandaloneProject } from "./standalone-project.js";
import { countFaults, NO_COUNTS, type FaultCounts } from "./fault-ledger.js";

/** The agent whose policy asks a person before each `charge` (the approval kills' target). */
export const ASKER = "asker";

const ASK_POLICY = `description: A person approves every charge of the fault-injection agent.
rules:
  - tool: workers/charge
    decision: ask
  - tool: workers/*
    decision: allow
`;

/** One kill of a run: the turns' shape, the messages sent before it, and how long after the last was accepted it lands. */
export interface KillPlan {
  shape: TurnShape;
  messages: { text: string; conversation: string }[];
  killDelayMs: number;
  /**
   * A kill around a person's approval: the messages go to ASKER, and the kill
   * lands while the first ask waits (`beforeApproving`) or `afterApprovalMs`
   * after the person approved it.
   */
  approval?: { beforeApproving: boolean; afterApprovalMs: number };
}

export interface RunResult {
  kills: number;
  counts: FaultCounts;
  stats: CheckStats | undefined;
  /** Broken promises (checkInvariants), asks with an unexpected reason, or the error that ended the run. */
  failures: string[];
  /** Asks of ASKER's policy the person approved (the approval kills' calls, and the turns after them). */
  policyApprovals: number;
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
    const killDelayMs = int(0, perTurn * Math.ceil(count / conversations));
    if (i % 2 === 0) return { shape, messages, killDelayMs };
    // From before the approved call is sent, through its run, to after its answer and the model's next call.
    const approval = { beforeApproving: rand() < 0.25, afterApprovalMs: int(0, shape.toolMs!.charge! + shape.model2Ms! + 100) };
    return { shape, messages, killDelayMs, approval };
  });
}

/** Runs `plans` as the kills of one project; `database` is config.yaml's `database:` (default the project's own SQLite file). */
export async function singleNodeFaultRun(plans: readonly KillPlan[], database?: string): Promise<RunResult> {
  let project: StandaloneProject | undefined;
  let worker: FaultWorker | undefined;
  const accepted: Record<string, string[]> = { [AGENT]: [], [ASKER]: [] };
  const unexpected: string[] = [];
  let kills = 0;
  try {
    const byPrefix = Object.fromEntries(plans.map((p, i) => [`k${i}`, p.shape]));
    project = await standaloneProject({
      files: { ...faultFiles(), [`agents/${ASKER}.md`]: agentMarkdown({ policy: ASKER }), [`policies/${ASKER}.yaml`]: ASK_POLICY },
      scripts: { [AGENT]: faultScript(plans[0]?.shape, byPrefix) },
      ...(database !== undefined ? { database } : {}),
    });
    await project.start();
    worker = startWorker(project, dirname(project.dir));
    // A first start compiles the worker's TypeScript: slow on a busy machine.
    await waitForWorker(project, worker.child.pid!, 60_000);
    const ids: Record<string, string> = { [AGENT]: await agentIdOf(project), [ASKER]: await agentIdOf(project, ASKER) };
    /** Approves lost answers (and, for ASKER, the policy's asks: the person) until every turn has ended. */
    const settleAll = async (d: StandaloneProject) => {
      const events: Record<string, FaultEvent[]> = {};
      for (const name of [AGENT, ASKER]) {
        const settled = await settle(d, ids[name]!, accepted[name]!, 60_000, { policyAsks: name === ASKER });
        unexpected.push(
          ...settled.unexpectedApprovals.map((e) => `unexpected approval request for ${String(e.data.call)}: ${String(e.data.reason)}`),
        );
        events[name] = settled.events;
      }
      return events;
    };
    for (const p of plans) {
      const name = p.approval ? ASKER : AGENT;
      for (const m of p.messages) accepted[name]!.push(await send(project, ids[name]!, m.text, m.conversation));
      if (p.approval) {
        const ask = await waitForPolicyAsk(project, ids[name]!);
        if (!p.approval.beforeApproving) {
          await api(project, "POST", `/v1/agents/${ids[name]!}/calls/${String(ask.data.call)}/approve`);
          await sleep(p.approval.afterApprovalMs);
        }
      } else await sleep(p.killDelayMs);
      await project.kill();
      kills += 1;
      await project.start();
      await settleAll(project);
      // The next kill starts with the worker connected again, as the first did.
      await waitForWorker(project, worker.child.pid!, 30_000);
    }
    const events = await settleAll(project);
    const log = worker.log();
    const failures: string[] = [];
    let stats: CheckStats | undefined;
    for (const name of [AGENT, ASKER]) {
      // Each agent's calls against the worker's executions of them (a tag names its message, which names its kill).
      const mine = log.filter((l) => agentOfKill(plans, l.tag) === name);
      const report = checkInvariants({ events: events[name]!, log: mine, accepted: accepted[name]! });
      failures.push(...report.failures.map((f) => `${name}: ${f}`));
      stats = stats ? sumStats(stats, report.stats) : report.stats;
    }
    failures.push(...new Set(unexpected));
    const all = Object.values(events).flat();
    const counts = countFaults({ events: all, logs: log, accepted: Object.values(accepted).flat() });
    return { kills, counts, stats, failures, policyApprovals: policyApprovals(events[ASKER]!) };
  } catch (err) {
    // Unsettled: every accepted message counts as lost until shown otherwise.
    const all = Object.values(accepted).flat().length;
    const counts = { ...NO_COUNTS, accepted: all, lost: all };
    return { kills, counts, stats: undefined, failures: [`error: ${(err as Error).message.split("\n")[0]}`], policyApprovals: 0 };
  } finally {
    await worker?.stop();
    await project?.dispose();
  }
}

/** The first ask of a policy rule that nobody has answered yet. */
async function waitForPolicyAsk(d: StandaloneProject, agentId: string): Promise<FaultEvent> {
  return waitUntil(
    async () => {
      const events = await eventsOf(d, agentId);
      const answered = new Set(events.filter((e) => /^approval\.(granted|denied)$/.test(short(e.type))).map((e) => String(e.data.call)));
      return events.find((e) => short(e.type) === "approval.requested" && isPolicyAsk(e) && !answered.has(String(e.data.call)));
    },
    "a policy's ask to wait for the person",
    30_000,
  );
}

function sumStats(a: CheckStats, b: CheckStats): CheckStats {
  const out = { ...a };
  for (const k of Object.keys(out) as (keyof CheckStats)[]) out[k] += b[k];
  return out;
}

/** The agent the messages of a tag's kill went to (tags are `k<kill>-m<n>/<tool>`). */
function agentOfKill(plans: readonly KillPlan[], tag: string): string | undefined {
  const kill = /^k(\d+)-/.exec(tag)?.[1];
  const plan = kill === undefined ? undefined : plans[Number(kill)];
  return plan && (plan.approval ? ASKER : AGENT);
}

/** Grants that answered an ask of a policy rule. */
function policyApprovals(events: FaultEvent[]): number {
  const asks = new Map<string, FaultEvent>();
  let granted = 0;
  for (const e of events) {
    if (short(e.type) === "approval.requested") asks.set(String(e.data.call), e);
    else if (short(e.type) === "approval.granted" && asks.has(String(e.data.call)) && isPolicyAsk(asks.get(String(e.data.call))!))
      granted += 1;
  }
  return granted;
}
