/**
 * Fault injection: a call the worker finished, whose answer the daemon lost,
 * is never asked about and never runs twice (issue 30, points 1-3).
 *
 * The kill point is the one of kill-on-end.test.ts, in its harder form: the
 * worker finished the unsafe `charge`, the daemon was frozen (SIGSTOP), the
 * SDK wrote the result frame to the socket (the daemon's kernel took it), and
 * only then the daemon was killed. The worker believes its answer delivered,
 * so nothing waits in its outbox: only the daemon's question ("do you know
 * this call's key?") can bring the answer back.
 *
 * - The worker lives on: the restarted daemon asks it, and the call completes
 *   from its answer. Nobody is asked.
 * - The worker dies too, and a new worker process starts over the same
 *   file-backed finished-calls store: the new process answers for the old one.
 * - No worker comes back within worker_grace: a person decides, and the
 *   approval prompt names the worker instance the call went to and says it is gone.
 * - A safe call failed "No worker serves ..." after a restart, because its
 *   worker was away past the grace; the worker comes back with the result it
 *   kept: the record turns into a call.completed with late: true, and the
 *   model reads a note about it in its next input.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { LOST_ANSWER } from "../../src/runtime/types.js";
import { short, waitUntil, type FaultEvent } from "./fault-api.js";
import { startWorker } from "./fault-worker-process.js";
import { callsByTool, faultProject, ofType, turnEvents, type FaultProject } from "./fault-project.js";

// The charge runs until the test has ordered the kill on its end and releases it (however slow the machine).
const CHARGE_HELD = { toolMs: { lookup: 100, upsert: 100, charge: 100 }, rerunMs: 100, hold: ["charge" as const] };

async function killAfterSend(f: FaultProject, prefix: string): Promise<{ m: string; exec: number }> {
  const { seen } = await f.watch((_e, all) => ofType(all, "call.completed").length === 2);
  const m = await f.send(prefix);
  await seen;
  f.w.killOnEnd({ pid: f.d.pid!, tag: `${prefix}/charge`, when: "sent" });
  f.w.release(`${prefix}/charge`);
  await f.d.waitForExit(30_000);
  const ended = f.logOf(`${prefix}/charge`).find((l) => l.phase === "end");
  expect(ended, "the charge ended in the worker before the kill").toBeDefined();
  return { m, exec: ended!.exec };
}

describe("a call the worker finished, whose answer the daemon lost after it was sent", () => {
  let f: FaultProject;
  let finishedFile: string;
  beforeAll(async () => {
    finishedFile = join(mkdtempSync(join(tmpdir(), "wardrik-finished-")), "finished.jsonl");
    f = await faultProject({ sent: CHARGE_HELD, both: CHARGE_HELD, gone: CHARGE_HELD }, {}, { finishedFile, workerGrace: 3 });
  });

  it("the restarted daemon asks the worker: the call completes from its answer, nobody is asked", { timeout: 90_000 }, async () => {
    const { m, exec } = await killAfterSend(f, "sent-1");
    await f.restart();
    const { events, approved, report } = await f.settleAndCheck([m]);
    const turn = turnEvents(events, m);
    const calls = callsByTool(turn);
    expect(f.w.log().filter((l) => l.key === calls.charge && l.phase === "start")).toHaveLength(1);
    const done = ofType(turn, "call.completed", calls.charge);
    expect(done).toHaveLength(1);
    expect((done[0]!.data.output as { exec: number }).exec).toBe(exec);
    expect(ofType(turn, "approval.requested")).toEqual([]);
    expect(approved.size).toBe(0);
    expect(report.stats.lost_results).toBe(0);
  });

  it("the worker dies too; a new worker process over the same finished-calls file answers for it", { timeout: 120_000 }, async () => {
    const { m, exec } = await killAfterSend(f, "both-1");
    const before = f.w;
    await before.stop();
    // The same name: its executions go to the same log, which the invariants read.
    f.w = startWorker(f.d, join(dirname(f.p.dir), "faults"), "worker", { finishedFile });
    await f.restart();
    const { events, approved } = await f.settleAndCheck([m]);
    const turn = turnEvents(events, m);
    const calls = callsByTool(turn);
    const done = ofType(turn, "call.completed", calls.charge);
    expect(done).toHaveLength(1);
    expect(done[0]!.data.output).toMatchObject({ exec, pid: before.child.pid });
    // The new process never ran it: it answered from the file.
    expect(f.w.log().filter((l) => l.key === calls.charge && l.pid === f.w.child.pid)).toEqual([]);
    expect(ofType(turn, "approval.requested")).toEqual([]);
    expect(approved.size).toBe(0);
  });

  it(
    "no worker within worker_grace: a person decides, told which worker instance ran it and that it is gone",
    { timeout: 90_000 },
    async () => {
      const { m } = await killAfterSend(f, "gone-1");
      const gone = f.w;
      await gone.stop();
      await f.restart({ waitForWorker: false });
      const asked = await waitUntil(
        async () => ofType(turnEvents(await f.p.events(f.agentId), m), "approval.requested")[0],
        "the lost-answer approval request",
        60_000,
      );
      const worker = asked.data.worker as { name: string; instance: string; node?: string };
      expect(worker.name).toBe(`fault-worker-${gone.child.pid}`);
      expect(worker.instance).toMatch(/^[0-9a-f-]{36}$/);
      // On PostgreSQL the daemon is a node of a (one-node) cluster: the node is named too.
      const where = `worker ${worker.name} (instance ${worker.instance}${worker.node ? `, node ${worker.node}` : ""})`;
      expect(asked.data.reason).toBe(
        `${LOST_ANSWER} It was last sent to ${where}, which is gone: no worker connected now can say whether it finished the call, so approving may run it a second time.`,
      );
      expect(asked.data).toMatchObject({ lost: true, code: "lost" });
    },
  );
});

describe("a call recorded failed for lack of a worker, that the worker had finished", () => {
  let f: FaultProject;
  beforeAll(async () => {
    f = await faultProject({ late: { toolMs: { upsert: 100 }, hold: ["upsert"] } }, {}, { workerGrace: 2 });
  });

  it(
    "the worker's late answer turns the record into a call.completed with late: true, and the model reads a note in its next input",
    { timeout: 120_000 },
    async () => {
      const m = await f.send("late-1");
      await waitUntil(() => f.logOf("late-1/upsert").some((l) => l.phase === "start"), "the upsert to start in the worker", 30_000, 5);
      // The upsert ends, the daemon dies before it hears: the worker keeps the result for the next connection.
      f.w.killOnEnd({ pid: f.d.pid!, tag: "late-1/upsert" });
      // (And every later upsert of the file: late-2's turn has the same shape.)
      f.w.release("late-");
      await f.d.waitForExit(30_000);
      const exec = f.logOf("late-1/upsert").find((l) => l.phase === "end")!.exec;
      await waitUntil(() => /1 finished call message\(s\) wait/.test(f.w.stderr()), "the result to wait in the worker's outbox", 30_000);
      // The worker is away past the grace: frozen while the daemon restarts.
      f.w.child.kill("SIGSTOP");
      try {
        await f.restart({ waitForWorker: false });
        const ended = await waitUntil(
          async () => ofType(turnEvents(await f.p.events(f.agentId), m), "turn.completed")[0],
          "the turn to end without the worker",
          60_000,
        );
        const before = turnEvents(await f.p.events(f.agentId), m);
        const call = callsByTool(before).upsert!;
        expect(ofType(before, "call.failed", call)[0]!.data).toMatchObject({ code: "no_worker" });
        expect(String(ended.data.reply)).toBe("done late-1");
      } finally {
        f.w.child.kill("SIGCONT");
      }
      // Back, the worker delivers the result it kept: the record says what happened.
      const late = await waitUntil(
        async () => ofType(turnEvents(await f.p.events(f.agentId), m), "call.completed").find((e) => e.data.late === true),
        "the late completion",
        60_000,
      );
      const turn = turnEvents(await f.p.events(f.agentId), m);
      const call = callsByTool(turn).upsert!;
      expect(late.data).toMatchObject({ call, tool: "workers/upsert", late: true, attempt: 1 });
      expect((late.data.output as { exec: number }).exec).toBe(exec);
      expect(f.logOf("late-1/upsert").filter((l) => l.phase === "start")).toHaveLength(1);

      // The next turn's model input holds a note about it, after the turn it concerns.
      const m2 = await f.send("late-2");
      await waitUntil(
        async () => {
          const events = await f.p.events(f.agentId);
          return ofType(events, "turn.completed").some((e) => e.run === runOfMessage(events, m2));
        },
        "the next turn to end",
        60_000,
      );
      const history = await f.p.apiOk<{ messages: { seq: number; role: string; content: { text?: string; input?: string } }[] }>(
        "GET",
        `/v1/agents/${f.agentId}/conversations/main/messages`,
      );
      const noteAt = history.messages.findIndex((h) => h.role === "user" && h.content.input === call);
      expect(noteAt).toBeGreaterThan(0);
      expect(history.messages[noteAt]!.content.text).toContain(`The call ${call} to workers/upsert was reported to you as failed`);
      expect(history.messages[noteAt + 1]!.content.input).toBe(m2);
      const firstReply = ofType(turnEvents(await f.p.events(f.agentId), m2), "model.replied")[0]!;
      // The prompt: the instructions, then every message up to late-2's, the note among them.
      expect(firstReply.data.messages).toBe(1 + noteAt + 2);
    },
  );
});

function runOfMessage(events: FaultEvent[], message: string): string | undefined {
  return events.find((e) => short(e.type) === "turn.started" && (e.data.messages as string[]).includes(message))?.run;
}
