/**
 * `npm run bench -- recovery [TURNS]` (after `npm run build`): crash recovery at scale.
 *
 * Layout: one agent, TURNS (default 200) conversations, one message each, so
 * TURNS turns run at once. Each turn's model asks for one call of the worker's
 * readOnly tool `lookup`, which blocks (10 minutes) the first time the worker
 * sees the call's idempotency key and answers at once when it sees the key
 * again. Once the worker's own log shows every call blocked, the daemon gets
 * SIGKILL and is started again in the same project; the worker reconnects, and
 * recovery re-runs every call (readOnly: no approval) with its key.
 *
 * Measured from the restart (just before the new daemon process is spawned)
 * to the last turn.completed (its event time): `seconds_to_all_finished`;
 * `seconds_to_listening` is the part spent starting (spawn to HTTP ready).
 * `duplicated_completed_calls` counts calls whose result was stored and that
 * ran (or completed) again: it must be 0. The full invariant check of the
 * fault suite runs too (`invariant_failures`).
 */
import { dirname } from "node:path";
import { AGENT, faultFiles, faultScript } from "../packages/daemon/test/faults/fault-agent.js";
import { agentIdOf, eventsOf, followEvents, send, short, waitUntil, type FaultEvent } from "../packages/daemon/test/faults/fault-api.js";
import { checkInvariants } from "../packages/daemon/test/faults/fault-invariants.js";
import { startWorker, waitForWorker } from "../packages/daemon/test/faults/fault-worker-process.js";
import { standaloneProject } from "../packages/daemon/test/faults/standalone-project.js";

const TURNS = Number(process.argv[2] ?? 200);
const SENDERS = 16;

const project = await standaloneProject({
  files: faultFiles({ timeout: 3600 }),
  scripts: { [AGENT]: faultScript({ toolMs: { lookup: 600_000 }, rerunMs: 0 }) },
});
const worker = startWorker(project, dirname(project.dir));
try {
  await project.start();
  await waitForWorker(project, worker.child.pid!);
  const agent = await agentIdOf(project);

  const accepted: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: SENDERS }, async () => {
      while (next < TURNS) {
        const i = next++;
        accepted.push(await send(project, agent, `r${i}`, `c${i}`));
      }
    }),
  );
  await waitUntil(
    () => worker.log().filter((l) => l.phase === "start").length >= TURNS,
    `${TURNS} calls blocked in the worker`,
    120_000,
    50,
  );
  const before = (await eventsOf(project, agent)).at(-1)!.seq;

  await project.kill();
  const restartAt = Date.now();
  const t0 = performance.now();
  await project.start();
  const listeningS = (performance.now() - t0) / 1000;

  // Follow the record until every turn has ended.
  const ended = new Map<string, FaultEvent>();
  const follow = followEvents(project, agent, before, (e) => {
    if (/^turn\.(completed|failed|cancelled)$/.test(short(e.type))) ended.set(e.run!, e);
    return ended.size >= TURNS;
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    follow.done,
    new Promise((_, reject) => (timer = setTimeout(() => reject(new Error("turns did not all end within 120 s")), 120_000))),
  ]);
  clearTimeout(timer);
  follow.stop();
  const lastEnd = Math.max(...[...ended.values()].map((e) => Date.parse(e.time)));

  const events = await eventsOf(project, agent);
  const log = worker.log();
  const report = checkInvariants({ events, log, accepted });
  // Completed calls that ran or completed again: a start after the stored result, or a second stored result.
  const completedAt = new Map<string, number[]>();
  for (const e of events) {
    if (short(e.type) !== "call.completed") continue;
    const id = String(e.data.call);
    completedAt.set(id, [...(completedAt.get(id) ?? []), Date.parse(e.time)]);
  }
  let duplicated = 0;
  for (const [id, times] of completedAt) {
    if (times.length > 1 || log.some((l) => l.key === id && l.phase === "start" && l.time > times[0]!)) duplicated += 1;
  }
  const failedTurns = [...ended.values()].filter((e) => short(e.type) !== "turn.completed").length;
  console.log(
    JSON.stringify({
      workload: "recovery",
      turns: TURNS,
      layout: `1 agent, ${TURNS} conversations, 1 turn each, each blocked in a readOnly worker call`,
      seconds_to_all_finished: Number(((lastEnd - restartAt) / 1000).toFixed(3)),
      seconds_to_listening: Number(listeningS.toFixed(3)),
      turns_completed: ended.size - failedTurns,
      turns_failed: failedTurns,
      duplicated_completed_calls: duplicated,
      reruns: report.stats.safe_reruns,
      approvals_asked: events.filter((e) => short(e.type) === "approval.requested").length,
      invariant_failures: report.failures.length,
      ...(report.failures.length > 0 ? { first_failures: report.failures.slice(0, 3) } : {}),
    }),
  );
} finally {
  await worker.stop();
  await project.dispose();
}
