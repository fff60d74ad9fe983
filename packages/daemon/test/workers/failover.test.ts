import { afterEach, expect, test } from "vitest";
import { LOST_ANSWER } from "../../src/runtime/types.js";
import type { ToolOutcome } from "../../src/tools/toolset.js";
import { callContext, spawnWorker, startDaemon, workerEnv, type TestDaemon, type WorkerProcess } from "./helpers.js";
import { connectRawWorker } from "./raw-worker.js";

// Several workers of one tool, and workers that go away mid-call. The gateway only carries calls:
// it never sends a call again on its own (the runtime decides that), it waits a grace period for a
// lost worker's answer, and hands answers nobody waits for to the runtime.
let daemon: TestDaemon | undefined;
let workers: WorkerProcess[] = [];

function spawn(name: string): WorkerProcess {
  const worker = spawnWorker("tools-worker.ts", workerEnv(daemon!, "token-a", name));
  workers.push(worker);
  return worker;
}

async function waitForWorkers(count: number): Promise<void> {
  const until = Date.now() + 20_000;
  while (daemon!.gateway.status({ org: "org-a", agentId: "agt_test" }).filter((s) => s.reason?.includes("slow_write")).length < count) {
    if (Date.now() > until) throw new Error(`${count} workers did not register`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

afterEach(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  workers = [];
  await daemon?.close();
  daemon = undefined;
});

test("two workers of one tool share the calls", async () => {
  daemon = await startDaemon();
  spawn("w1");
  spawn("w2");
  await waitForWorkers(2);
  const served = new Map<string, number>();
  for (let i = 0; i < 20; i++) {
    const outcome = await daemon.gateway.call("echo_ctx", {}, callContext().ctx);
    if (!outcome.ok) throw new Error(outcome.error);
    const name = (outcome.output as { worker: string }).worker;
    served.set(name, (served.get(name) ?? 0) + 1);
  }
  expect(served.get("w1")).toBe(10);
  expect(served.get("w2")).toBe(10);
  // Concurrent calls go to the worker with fewer in flight.
  const outcomes = await Promise.all(
    Array.from({ length: 10 }, (_, i) => daemon!.gateway.call("slow_idempotent", { tag: `p${i}`, ms: 200 }, callContext().ctx)),
  );
  const byWorker = outcomes.map((o) => (o.ok ? (o.output as { worker: string }).worker : "failed"));
  expect(byWorker.filter((w) => w === "w1")).toHaveLength(5);
  expect(byWorker.filter((w) => w === "w2")).toHaveLength(5);
});

test("a call whose worker dies is reported lost after the grace, and never sent again by the gateway", async () => {
  daemon = await startDaemon({ reconnectGraceMs: 400 });
  const pair = [spawn("w1"), spawn("w2")];
  await waitForWorkers(2);
  const pending = daemon.gateway.call("slow_idempotent", { tag: "l1", ms: 3000 }, callContext().ctx);
  const first = await Promise.race(pair.map((w) => w.waitFor((e) => e.event === "started" && e.tag === "l1")));
  const killedAt = Date.now();
  pair.find((w) => w.events.includes(first))!.child.kill("SIGKILL");
  expect(await pending).toEqual({ ok: false, kind: "lost", error: LOST_ANSWER });
  expect(Date.now() - killedAt).toBeGreaterThanOrEqual(300);
  // A later call goes to the worker left, after l1 would have been sent to it again.
  const survivor = pair.find((w) => !w.events.includes(first))!;
  expect(await daemon.gateway.call("slow_idempotent", { tag: "l2", ms: 1 }, callContext().ctx)).toMatchObject({ ok: true });
  await survivor.waitFor((e) => e.event === "started" && e.tag === "l2");
  expect(pair.flatMap((w) => w.events).filter((e) => e.event === "started" && e.tag === "l1")).toHaveLength(1);
});

test("a worker that reconnects within the grace delivers the answer of the call it kept", async () => {
  daemon = await startDaemon({ reconnectGraceMs: 10_000 });
  const first = await connectRawWorker(daemon.url, "token-a", [{ name: "send_email" }]);
  const { ctx } = callContext();
  const pending = daemon.gateway.call("send_email", { to: "a@example.com" }, ctx);
  const call = await first.nextCall();
  await first.drop();
  const again = await connectRawWorker(daemon.url, "token-a", [{ name: "send_email" }]);
  again.answer(call.callId, call.attempt, { sent: true });
  expect(await pending).toEqual({ ok: true, output: { sent: true } });
});

test("an answer nobody waits for goes to the runtime, tagged with the worker's org", async () => {
  const late: { org: string; callId: string; attempt: number; outcome: ToolOutcome }[] = [];
  daemon = await startDaemon({ onLateAnswer: (org, answer) => late.push({ org, ...answer }) });
  const raw = await connectRawWorker(daemon.url, "token-b", [{ name: "send_email" }]);
  raw.answer("call_from_an_earlier_daemon", 1, { sent: true });
  const until = Date.now() + 5000;
  while (late.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  expect(late).toEqual([
    { org: "org-b", callId: "call_from_an_earlier_daemon", attempt: 1, outcome: { ok: true, output: { sent: true } } },
  ]);
});

test("a call of a previous daemon settles when its worker delivers the answer it kept, while the workers are asked", async () => {
  daemon = await startDaemon();
  const scope = { org: "org-a", agentId: "agt_test" };
  const question = { callId: "call_kept", idempotencyKey: "call_kept", attempt: 1, until: Date.now() + 10_000, runningMs: 10_000 };
  const waited = daemon.gateway.recall(question, scope);
  const raw = await connectRawWorker(daemon.url, "token-a", [{ name: "send_email" }]);
  raw.answer("call_kept", 1, { sent: "once" });
  expect(await waited).toEqual({ known: true, outcome: { ok: true, output: { sent: "once" } }, attempt: 1 });
});
