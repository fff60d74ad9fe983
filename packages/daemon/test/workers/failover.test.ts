import { afterEach, expect, test } from "vitest";
import { LOST_MESSAGE } from "../../src/tools/workers/pending-call.js";
import { callContext, spawnWorker, startDaemon, workerEnv, type TestDaemon, type WorkerProcess } from "./helpers.js";

// Several workers of one tool, and workers that die mid-call (SIGKILL: no goodbye).
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

test("an idempotent call whose worker is killed goes to the other worker with the same idempotency key", async () => {
  daemon = await startDaemon();
  const pair = [spawn("w1"), spawn("w2")];
  await waitForWorkers(2);
  const { ctx } = callContext({ idempotencyKey: "idem_failover" });
  const pending = daemon.gateway.call("slow_idempotent", { tag: "f1", ms: 2000 }, ctx);
  const first = await Promise.race(pair.map((w) => w.waitFor((e) => e.event === "started" && e.tag === "f1")));
  const victim = pair.find((w) => w.events.includes(first))!;
  const survivor = pair.find((w) => w !== victim)!;
  victim.child.kill("SIGKILL");
  const outcome = await pending;
  expect(outcome).toEqual({ ok: true, output: { tag: "f1", worker: survivor === pair[0] ? "w1" : "w2", idempotencyKey: "idem_failover" } });
  const second = await survivor.waitFor((e) => e.event === "started" && e.tag === "f1");
  expect(second.idempotencyKey).toBe("idem_failover");
  expect(first.idempotencyKey).toBe("idem_failover");
});

test("an idempotent call waits for a worker to come back when its only worker dies", async () => {
  daemon = await startDaemon();
  const w1 = spawn("w1");
  await waitForWorkers(1);
  const pending = daemon.gateway.call(
    "slow_idempotent",
    { tag: "r1", ms: 1000 },
    callContext({ idempotencyKey: "idem_back", timeoutMs: 20_000 }).ctx,
  );
  await w1.waitFor((e) => e.event === "started" && e.tag === "r1");
  w1.child.kill("SIGKILL");
  await w1.exited;
  const w2 = spawn("w2");
  expect(await pending).toEqual({ ok: true, output: { tag: "r1", worker: "w2", idempotencyKey: "idem_back" } });
  expect((await w2.waitFor((e) => e.event === "started" && e.tag === "r1")).idempotencyKey).toBe("idem_back");
});

test("a call that is neither read-only nor idempotent is reported lost when its worker dies", async () => {
  daemon = await startDaemon();
  const pair = [spawn("w1"), spawn("w2")];
  await waitForWorkers(2);
  const pending = daemon.gateway.call("slow_write", { tag: "l1", ms: 3000 }, callContext().ctx);
  const first = await Promise.race(pair.map((w) => w.waitFor((e) => e.event === "started" && e.tag === "l1")));
  pair.find((w) => w.events.includes(first))!.child.kill("SIGKILL");
  expect(await pending).toEqual({ ok: false, kind: "lost", error: "This call may have run, but its answer was lost." });
  expect(LOST_MESSAGE).toBe("This call may have run, but its answer was lost.");
  await new Promise((r) => setTimeout(r, 200));
  expect(pair.flatMap((w) => w.events).filter((e) => e.event === "started" && e.tag === "l1")).toHaveLength(1);
});

test("a retryable call waiting for a worker still times out", async () => {
  daemon = await startDaemon();
  const w1 = spawn("w1");
  await waitForWorkers(1);
  const pending = daemon.gateway.call("slow_idempotent", { tag: "t1", ms: 5000 }, callContext({ timeoutMs: 1500 }).ctx);
  await w1.waitFor((e) => e.event === "started" && e.tag === "t1");
  w1.child.kill("SIGKILL");
  expect(await pending).toEqual({
    ok: false,
    kind: "timeout",
    error: "workers/slow_idempotent timed out after 1.5 s while waiting for a worker (its worker was lost).",
  });
});
