import { afterEach, expect, test } from "vitest";
import { CallStopper } from "../../src/tools/call-stopper.js";
import { CallStop, type ToolCallContext } from "../../src/tools/toolset.js";
import { callContext, spawnWorker, startDaemon, workerEnv, type TestDaemon, type WorkerProcess } from "./helpers.js";

// Stopping calls: timeouts, kills, turn cancellation, no worker, and a worker's close() draining.
let daemon: TestDaemon | undefined;
let workers: WorkerProcess[] = [];

async function setup(): Promise<{ daemon: TestDaemon; worker: WorkerProcess }> {
  daemon = await startDaemon();
  const worker = spawnWorker("tools-worker.ts", workerEnv(daemon));
  workers.push(worker);
  expect(await daemon.gateway.waitForTool("org-a", "wait_for_abort", 20_000)).toBe(true);
  return { daemon, worker };
}

afterEach(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  workers = [];
  await daemon?.close();
  daemon = undefined;
});

test("a call the runtime times out is a timeout for the worker too: its signal says so", async () => {
  const { daemon, worker } = await setup();
  const { ctx, controller } = callContext();
  const pending = daemon.gateway.call("wait_for_abort", { tag: "t1" }, ctx);
  await worker.waitFor((e) => e.event === "started" && e.tag === "t1");
  controller.abort(new CallStop("timeout"));
  expect(await pending).toMatchObject({ ok: false, kind: "timeout" });
  const aborted = await worker.waitFor((e) => e.event === "aborted" && e.tag === "t1");
  expect(aborted.reason).toBe("The call timed out.");
});

test("a daemon stopping does not abort its worker calls: the worker keeps them for the next daemon", async () => {
  const { daemon, worker } = await setup();
  const { ctx, controller } = callContext();
  const pending = daemon.gateway.call("wait_for_abort", { tag: "s1" }, ctx);
  await worker.waitFor((e) => e.event === "started" && e.tag === "s1");
  controller.abort(new CallStop("shutdown"));
  await pending;
  // A later call, cancelled: its abort goes down the same connection after any abort of s1 would have.
  const later = callContext();
  const next = daemon.gateway.call("wait_for_abort", { tag: "s2" }, later.ctx);
  await worker.waitFor((e) => e.event === "started" && e.tag === "s2");
  later.controller.abort(new CallStop("cancelled"));
  await next;
  await worker.waitFor((e) => e.event === "aborted" && e.tag === "s2");
  expect(worker.events.some((e) => e.event === "aborted" && e.tag === "s1")).toBe(false);
});

test("a call killed through ctx.signal returns at once and aborts the worker's signal", async () => {
  const { daemon, worker } = await setup();
  const { ctx, controller } = callContext();
  const pending = daemon.gateway.call("wait_for_abort", { tag: "k1" }, ctx);
  await worker.waitFor((e) => e.event === "started" && e.tag === "k1");
  controller.abort(new CallStop("killed"));
  expect(await pending).toEqual({ ok: false, kind: "killed", error: "workers/wait_for_abort was killed before it finished." });
  expect((await worker.waitFor((e) => e.event === "aborted" && e.tag === "k1")).reason).toBe("The call was killed.");
});

test("a call stopped through the runtime's stop watch is killed without ever making its AbortSignal", async () => {
  const { daemon, worker } = await setup();
  let signalRead = false;
  // As invoke-tool.ts hands a call: its signal is made only when read; the gateway listens to the watch.
  const watched = (): { ctx: ToolCallContext; stop: CallStopper } => {
    const stop = new CallStopper();
    const { ctx } = callContext();
    return {
      stop,
      ctx: {
        ...ctx,
        get signal() {
          signalRead = true;
          return stop.signal;
        },
        stop,
      },
    };
  };
  expect(await daemon.gateway.call("find_order", { payment_intent: "pi_w" }, watched().ctx)).toMatchObject({ ok: true });
  const killed = watched();
  const pending = daemon.gateway.call("wait_for_abort", { tag: "w1" }, killed.ctx);
  await worker.waitFor((e) => e.event === "started" && e.tag === "w1");
  killed.stop.abort(new CallStop("killed"));
  expect(await pending).toEqual({ ok: false, kind: "killed", error: "workers/wait_for_abort was killed before it finished." });
  expect((await worker.waitFor((e) => e.event === "aborted" && e.tag === "w1")).reason).toBe("The call was killed.");
  // A call whose watch has stopped already never reaches a worker.
  const early = watched();
  early.stop.abort(new CallStop("timeout"));
  expect(await daemon.gateway.call("wait_for_abort", { tag: "w2" }, early.ctx)).toMatchObject({ ok: false, kind: "killed" });
  expect(worker.events.some((e) => e.tag === "w2")).toBe(false);
  expect(signalRead).toBe(false);
});

test("a call whose turn is cancelled aborts with the cancellation reason", async () => {
  const { daemon, worker } = await setup();
  const { ctx, controller } = callContext();
  const pending = daemon.gateway.call("wait_for_abort", { tag: "c1" }, ctx);
  await worker.waitFor((e) => e.event === "started" && e.tag === "c1");
  controller.abort(new CallStop("cancelled"));
  expect(await pending).toMatchObject({ ok: false, kind: "killed", error: expect.stringContaining("its turn ended") });
  expect((await worker.waitFor((e) => e.event === "aborted" && e.tag === "c1")).reason).toBe("The call's turn was cancelled.");
});

test("a call with an already aborted signal never reaches a worker", async () => {
  const { daemon, worker } = await setup();
  const { ctx, controller } = callContext();
  controller.abort();
  expect(await daemon.gateway.call("wait_for_abort", { tag: "a0" }, ctx)).toMatchObject({ ok: false, kind: "killed" });
  // A later call reaches the worker after a0 would have.
  const later = callContext();
  void daemon.gateway.call("wait_for_abort", { tag: "a1" }, later.ctx);
  await worker.waitFor((e) => e.event === "started" && e.tag === "a1");
  later.controller.abort(new CallStop("cancelled"));
  expect(worker.events.some((e) => e.tag === "a0")).toBe(false);
});

test("with no worker serving the tool the call fails at once, saying so", async () => {
  daemon = await startDaemon({ reconnectGraceMs: 0 });
  const started = Date.now();
  const outcome = await daemon.gateway.call("find_order", { payment_intent: "pi_1" }, callContext().ctx);
  expect(Date.now() - started).toBeLessThan(50);
  expect(outcome).toMatchObject({ ok: false, kind: "unavailable", error: expect.stringContaining("No worker serves workers/find_order") });
  expect(daemon.gateway.list({ org: "org-a", agentId: "agt_test" })).toEqual([]);
  expect(await daemon.gateway.waitForTool("org-a", "find_order", 50)).toBe(false);
});

test("right after a start, a call to a tool nobody serves yet waits for a worker to register it", async () => {
  daemon = await startDaemon({ reconnectGraceMs: 10_000 });
  const pending = daemon.gateway.call("find_order", { payment_intent: "pi_9" }, callContext().ctx);
  workers.push(spawnWorker("tools-worker.ts", workerEnv(daemon)));
  expect(await pending).toEqual({ ok: true, output: { id: "ord_1", payment_intent: "pi_9" } });
});

test("close() on the worker drains: the running call completes, new calls go nowhere, listen() resolves", async () => {
  const { daemon, worker } = await setup();
  const pending = daemon.gateway.call("slow_write", { tag: "d1", ms: 700 }, callContext().ctx);
  await worker.waitFor((e) => e.event === "started" && e.tag === "d1");
  worker.child.kill("SIGTERM");
  await worker.waitFor((e) => e.event === "closing");
  // Once the daemon has the drain request the worker gets no new calls.
  await waitUntil(() => daemon.gateway.list({ org: "org-a", agentId: "agt_test" }).length === 0);
  expect(await daemon.gateway.call("find_order", { payment_intent: "pi_1" }, callContext().ctx)).toMatchObject({ kind: "unavailable" });
  expect(await pending).toEqual({ ok: true, output: expect.objectContaining({ tag: "d1", worker: "w1" }) });
  await worker.waitFor((e) => e.event === "listen_resolved");
  expect(await worker.exited).toBe(0);
});

async function waitUntil(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
