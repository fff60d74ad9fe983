/**
 * Asking the workers about a call whose answer was lost (the `recall`
 * question of the worker protocol), at the gateway: a real SDK worker answers
 * with the result it gave, or, still running the call, with its answer once
 * done; a worker process restarted over a file-backed finished-calls store
 * answers for its predecessor; a worker that never answers (an SDK older than
 * the question) counts as not knowing. A call sent again while in flight
 * joins it, and an earlier attempt's plain answer does not settle a later one.
 * An answer nested deeper than the depth limit is refused with its connection.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { CallStop, type LateAnswer, type RecallQuestion, type WorkerRef } from "../../src/tools/toolset.js";
import { callContext, spawnWorker, startDaemon, workerEnv, type TestDaemon, type WorkerProcess } from "./helpers.js";
import { connectRawWorker } from "./raw-worker.js";

const SCOPE = { org: "org-a", agentId: "agt_test" };
let daemons: TestDaemon[] = [];
let workers: WorkerProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  workers = [];
  for (const d of daemons) await d.close();
  daemons = [];
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function daemonWith(dispatched: WorkerRef[] = [], late: LateAnswer[] = [], port = 0): Promise<TestDaemon> {
  const d = await startDaemon(
    { reconnectGraceMs: 10_000, onDispatched: (_org, _call, w) => dispatched.push(w), onLateAnswer: (_org, a) => late.push(a) },
    port,
  );
  daemons.push(d);
  return d;
}

function spawn(d: TestDaemon, name: string, env: Record<string, string> = {}): WorkerProcess {
  const w = spawnWorker("tools-worker.ts", { ...workerEnv(d, "token-a", name), ...env });
  workers.push(w);
  return w;
}

async function registered(d: TestDaemon, name: string): Promise<void> {
  const until = Date.now() + 20_000;
  while (!d.gateway.status(SCOPE).some((s) => s.name.startsWith(`worker ${name} `) && s.reason?.includes("slow_write"))) {
    if (Date.now() > until) throw new Error(`worker ${name} did not register`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function question(callId: string, key: string, more: Partial<RecallQuestion> = {}): RecallQuestion {
  return { callId, idempotencyKey: key, attempt: 1, until: Date.now(), runningMs: 20_000, ...more };
}

const startsOf = (w: WorkerProcess, tag: string) => w.events.filter((e) => e.event === "started" && e.tag === tag);

test("a worker that ran the call answers with the result it gave; it does not run it again", async () => {
  const d = await daemonWith();
  const w = spawn(d, "w1");
  await registered(d, "w1");
  const { ctx } = callContext();
  const first = await d.gateway.call("slow_write", { tag: "ran", ms: 10 }, ctx);
  expect(first.ok).toBe(true);
  const answer = await d.gateway.recall(question(ctx.callId, ctx.idempotencyKey), SCOPE);
  expect(answer).toMatchObject({ known: true, attempt: 1, worker: { name: "w1" } });
  expect(answer.known && answer.outcome).toEqual(first);
  expect(startsOf(w, "ran")).toHaveLength(1);
});

test("a worker still running the call after a daemon restart: the new daemon's question waits for its answer", async () => {
  const d1 = await daemonWith();
  const w = spawn(d1, "w1");
  await registered(d1, "w1");
  const { ctx } = callContext();
  const lostWithD1 = d1.gateway.call("slow_write", { tag: "kept", ms: 1500 }, ctx);
  await w.waitFor((e) => e.event === "started" && e.tag === "kept");
  // The daemon goes away (the worker keeps the call), and another takes its port.
  const port = d1.port;
  await d1.close();
  daemons = daemons.filter((x) => x !== d1);
  expect((await lostWithD1).ok).toBe(false);
  const d2 = await daemonWith([], [], port);
  await registered(d2, "w1");
  const answer = await d2.gateway.recall(question(ctx.callId, ctx.idempotencyKey), SCOPE);
  expect(answer).toMatchObject({ known: true, outcome: { ok: true, output: { tag: "kept", worker: "w1" } } });
  expect(startsOf(w, "kept")).toHaveLength(1);
});

test("a restarted worker process with a file-backed finished-calls store answers for the one before it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "wardrik-finished-"));
  dirs.push(dir);
  const env = { FINISHED_FILE: join(dir, "finished.jsonl") };
  const d = await daemonWith();
  const before = spawn(d, "w1", env);
  await registered(d, "w1");
  const { ctx } = callContext();
  const first = await d.gateway.call("slow_write", { tag: "charged", ms: 10 }, ctx);
  expect(first.ok).toBe(true);
  await before.stop();
  // Asked while no worker is connected; the restarted process connects during the question's time.
  const asking = d.gateway.recall(question(ctx.callId, ctx.idempotencyKey, { until: Date.now() + 20_000 }), SCOPE);
  const after = spawn(d, "w1-again", env);
  const answer = await asking;
  expect(answer).toMatchObject({ known: true, worker: { name: "w1-again" } });
  expect(answer.known && answer.outcome).toEqual(first);
  expect(startsOf(after, "charged")).toEqual([]);
});

test("the worker the call was last sent to says it does not know it: nobody is waited for any longer", async () => {
  const dispatched: WorkerRef[] = [];
  const d = await daemonWith(dispatched);
  spawn(d, "w1");
  await registered(d, "w1");
  expect((await d.gateway.call("slow_write", { tag: "other", ms: 1 }, callContext().ctx)).ok).toBe(true);
  const w1 = dispatched[0]!;
  // A grace far longer than the test's timeout: only the early end lets this answer come at all.
  const answer = await d.gateway.recall(
    question("call_never_sent", "call_never_sent", { until: Date.now() + 600_000, lastInstance: w1.instance }),
    SCOPE,
  );
  expect(answer).toEqual({ known: false, unknownTo: [w1] });
});

test("a worker that never answers (an SDK older than the question) counts as not knowing the call", async () => {
  const d = await daemonWith();
  const raw = await connectRawWorker(d.url, "token-a", [{ name: "send_email" }]);
  const answer = await d.gateway.recall(question("call_x", "call_x"), SCOPE);
  expect(answer).toEqual({ known: false, unknownTo: [] });
  expect(raw.recalls).toMatchObject([{ type: "recall", callId: "call_x", idempotencyKey: "call_x" }]);
});

test("an earlier attempt's plain answer does not settle a question about a later one; the later attempt's does", async () => {
  const late: LateAnswer[] = [];
  const d = await daemonWith([], late);
  const raw = await connectRawWorker(d.url, "token-a", [{ name: "send_email" }]);
  const asking = d.gateway.recall(question("call_twice", "call_twice", { attempt: 2, until: Date.now() + 20_000 }), SCOPE);
  while (raw.recalls.length === 0) await new Promise((r) => setTimeout(r, 10));
  raw.answer("call_twice", 1, { attempt: 1 });
  while (late.length === 0) await new Promise((r) => setTimeout(r, 10));
  expect(late).toMatchObject([{ callId: "call_twice", attempt: 1 }]);
  raw.answer("call_twice", 2, { attempt: 2 });
  expect(await asking).toEqual({ known: true, outcome: { ok: true, output: { attempt: 2 } }, attempt: 2 });
});

test("a worker's 'finished' answer to the question settles it, with the attempt that ran", async () => {
  const d = await daemonWith();
  const raw = await connectRawWorker(d.url, "token-a", [{ name: "send_email" }], "raw-finished");
  const asking = d.gateway.recall(question("call_done", "call_done", { attempt: 3 }), SCOPE);
  while (raw.recalls.length === 0) await new Promise((r) => setTimeout(r, 10));
  raw.answerRecall(raw.recalls[0]!.ask, "call_done", { state: "finished", attempt: 1, output: { sent: 1 } });
  expect(await asking).toEqual({
    known: true,
    outcome: { ok: true, output: { sent: 1 } },
    attempt: 1,
    worker: { name: "raw", instance: "raw-finished" },
  });
});

test("a call sent again while it is in flight (a new owner) joins it instead of failing as already running", async () => {
  const d = await daemonWith();
  const raw = await connectRawWorker(d.url, "token-a", [{ name: "send_email" }]);
  const first = callContext();
  const pending1 = d.gateway.call("send_email", { to: "a@example.com" }, first.ctx);
  const call = await raw.nextCall();
  const again = callContext({ callId: first.ctx.callId, idempotencyKey: first.ctx.idempotencyKey, attempt: 2 });
  const pending2 = d.gateway.call("send_email", { to: "a@example.com" }, again.ctx);
  // The first caller's node gives the agent up (it froze and lost the lease): the call goes on for the second.
  first.controller.abort(new CallStop("shutdown"));
  raw.answer(call.callId, call.attempt, { sent: true });
  expect(await pending2).toEqual({ ok: true, output: { sent: true } });
  expect((await pending1).ok).toBe(false);
  expect(raw.calls).toEqual([]);
});

test("a person's kill of a call that two callers wait for stops it at the worker, for both", async () => {
  const d = await daemonWith();
  const raw = await connectRawWorker(d.url, "token-a", [{ name: "send_email" }]);
  const first = callContext();
  const pending1 = d.gateway.call("send_email", {}, first.ctx);
  const call = await raw.nextCall();
  const again = callContext({ callId: first.ctx.callId, idempotencyKey: first.ctx.idempotencyKey, attempt: 2 });
  const pending2 = d.gateway.call("send_email", {}, again.ctx);
  again.controller.abort(new CallStop("killed"));
  expect(await pending2).toMatchObject({ ok: false, kind: "killed" });
  expect(await pending1).toMatchObject({ ok: false, kind: "killed" });
  while (raw.aborts.length === 0) await new Promise((r) => setTimeout(r, 10));
  expect(raw.aborts).toEqual([{ type: "abort", callId: call.callId, reason: "killed" }]);
});

test("a 'finished' answer nested deeper than limits.json_depth closes the worker's connection and settles nothing", async () => {
  const d = await startDaemon({ maxJsonDepth: 8 });
  daemons.push(d);
  const raw = await connectRawWorker(d.url, "token-a", [{ name: "send_email" }], "raw-deep");
  const asking = d.gateway.recall(question("call_deep", "call_deep"), SCOPE);
  while (raw.recalls.length === 0) await new Promise((r) => setTimeout(r, 10));
  let output: unknown = "bottom";
  for (let i = 0; i < 20; i++) output = { more: output };
  raw.answerRecall(raw.recalls[0]!.ask, "call_deep", { state: "finished", attempt: 1, output });
  expect(await asking).toEqual({ known: false, unknownTo: [] });
  const until = Date.now() + 10_000;
  while (d.gateway.status(SCOPE).length > 0) {
    if (Date.now() > until) throw new Error("the worker that sent the deep answer is still connected");
    await new Promise((r) => setTimeout(r, 10));
  }
});
