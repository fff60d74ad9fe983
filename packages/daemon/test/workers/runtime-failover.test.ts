import { afterEach, expect, test } from "vitest";
import type { Script } from "@wardrik/testing";
import { LOST_ANSWER } from "../../src/runtime/types.js";
import { createHarness, type Harness } from "../helpers/runtime-harness.js";
import { waitFor } from "../helpers/wait.js";
import { spawnWorker, startDaemon, workerEnv, type TestDaemon, type WorkerProcess } from "./helpers.js";
import { connectRawWorker } from "./raw-worker.js";

// The runtime's side of lost workers and timeouts: one rule for what runs again, every attempt an event.
let daemon: TestDaemon | undefined;
let h: Harness | undefined;
let workers: WorkerProcess[] = [];
/** A harness that stopped as in a crash: closed (its database dropped) after the one that took over. */
let crashed: Harness | undefined;
/** What the runtime made of each answer the gateway found late (an attempt out, a call it no longer holds): true when it settled a call. */
let lateAnswers: Promise<boolean>[] = [];

afterEach(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  workers = [];
  await h?.close();
  h = undefined;
  await crashed?.close().catch(() => undefined);
  crashed = undefined;
  lateAnswers = [];
  await daemon?.close();
  daemon = undefined;
});

async function setup(opts: { graceMs?: number; toolTimeoutMs?: number; workers?: number } = {}): Promise<WorkerProcess[]> {
  daemon = await startDaemon({
    reconnectGraceMs: opts.graceMs ?? 300,
    onLateAnswer: (org, answer) => {
      if (h) lateAnswers.push(h.runtime.acceptLateAnswer(org, answer));
    },
  });
  h = await createHarness({ toolsets: [daemon.gateway], toolTimeoutMs: opts.toolTimeoutMs ?? 60_000 });
  const spawned = Array.from({ length: opts.workers ?? 0 }, (_, i) =>
    spawnWorker("tools-worker.ts", workerEnv(daemon!, "token-default", `w${i + 1}`)),
  );
  workers.push(...spawned);
  for (const _ of spawned) await daemon.gateway.waitForTool("default", "slow_write", 20_000);
  const until = Date.now() + 20_000;
  while (daemon.gateway.status({ org: "default", agentId: "x" }).length < spawned.length && Date.now() < until)
    await new Promise((r) => setTimeout(r, 20));
  return spawned;
}

const oneCall = (tool: string, args: Record<string, unknown>): Script => ({
  steps: [{ tool_calls: [{ tool, args }] }, { text: "done: {{result}}" }],
});
const types = (run: string) => h!.events.filter((e) => e.run === run).map((e) => e.type.replace("dev.wardrik.", ""));

test("a safe call whose worker dies runs again on another worker, with the same key, as a recorded attempt", async () => {
  const pair = await setup({ workers: 2 });
  const a = await h!.agent({ name: "a", tools: ["workers/*"], script: oneCall("workers/slow_idempotent", { tag: "s1", ms: 2000 }) });
  const ended = h!.ask(a, "go");
  const first = await Promise.race(pair.map((w) => w.waitFor((e) => e.event === "started" && e.tag === "s1")));
  pair.find((w) => w.events.includes(first))!.child.kill("SIGKILL");
  const end = await ended;
  expect(end.type).toBe("dev.wardrik.turn.completed");
  const retried = h!.events.find((e) => e.type === "dev.wardrik.call.retried")!;
  expect(retried.data).toMatchObject({ attempt: 2, code: "lost", retryable: true });
  const starts = pair.flatMap((w) => w.events).filter((e) => e.event === "started" && e.tag === "s1");
  expect(starts).toHaveLength(2);
  expect(new Set(starts.map((s) => s.idempotencyKey)).size).toBe(1);
  expect(types(end.run!)).toContain("call.retried");
});

test("an unsafe call whose worker dies goes to a person, and is never sent again on its own", async () => {
  const pair = await setup({ workers: 2 });
  const a = await h!.agent({ name: "a", tools: ["workers/*"], script: oneCall("workers/slow_write", { tag: "u1", ms: 2000 }) });
  // The turn parks and never ends here: its wait for the end times out after the test, unheard.
  h!.ask(a, "go").catch(() => undefined);
  const first = await Promise.race(pair.map((w) => w.waitFor((e) => e.event === "started" && e.tag === "u1")));
  pair.find((w) => w.events.includes(first))!.child.kill("SIGKILL");
  const asked = await h!.waitFor((e) => e.type === "dev.wardrik.approval.requested");
  expect(asked.data).toMatchObject({ tool: "workers/slow_write", lost: true });
  // The other worker was asked first: it does not know the call, so a person decides.
  expect(asked.data.reason).toBe(`${LOST_ANSWER} The other connected worker does not know it.`);
  await h!.waitFor((e) => e.type === "dev.wardrik.turn.parked");
  // A later call goes to the worker left, after u1 would have been sent to it again.
  const b = await h!.agent({ name: "b", tools: ["workers/*"], script: oneCall("workers/slow_write", { tag: "u2", ms: 1 }) });
  expect((await h!.ask(b, "go")).type).toBe("dev.wardrik.turn.completed");
  await pair.find((w) => !w.events.includes(first))!.waitFor((e) => e.event === "started" && e.tag === "u2");
  expect(pair.flatMap((w) => w.events).filter((e) => e.event === "started" && e.tag === "u1")).toHaveLength(1);
});

test("a timeout is a timeout: a safe call is tried once more with the same key, an unsafe one never", async () => {
  const [w] = await setup({ workers: 1, toolTimeoutMs: 400 });
  const safe = await h!.agent({ name: "safe", tools: ["workers/*"], script: oneCall("workers/slow_idempotent", { tag: "t1", ms: 5000 }) });
  const end = await h!.ask(safe, "go");
  expect(end.type).toBe("dev.wardrik.turn.completed");
  const timedOut = h!.events.filter((e) => e.run === end.run && e.type === "dev.wardrik.call.timed_out");
  expect(timedOut.map((e) => e.data.will_retry)).toEqual([true, false]);
  expect(timedOut[1]!.data).toMatchObject({ code: "timeout", timeout_s: 0.4, attempt: 2 });
  expect(String(timedOut[1]!.data.error)).toMatch(/timed out after 0\.4 s/);
  expect(h!.events.some((e) => e.run === end.run && e.type === "dev.wardrik.call.killed")).toBe(false);
  const attempts = h!.events.filter((e) => e.run === end.run && e.type === "dev.wardrik.call.started");
  expect(attempts.map((e) => e.data.attempt)).toEqual([1, 2]);
  expect(attempts[0]!.data.idempotency_key).toBe(attempts[1]!.data.idempotency_key);
  // The worker's idempotency helper saw the same key twice and ran the work once.
  expect(w!.events.filter((e) => e.event === "started" && e.tag === "t1")).toHaveLength(1);

  const unsafe = await h!.agent({ name: "unsafe", tools: ["workers/*"], script: oneCall("workers/wait_for_abort", { tag: "t2" }) });
  const end2 = await h!.ask(unsafe, "go");
  const once = h!.events.filter((e) => e.run === end2.run && e.type === "dev.wardrik.call.timed_out");
  expect(once.map((e) => e.data.will_retry)).toEqual([false]);
  // The worker's signal says why it stopped.
  expect((await w!.waitFor((e) => e.event === "aborted" && e.tag === "t2")).reason).toBe("The call timed out.");
});

test("a call whose worker came back after it went to a person completes with the kept answer, without the person", async () => {
  await setup({ graceMs: 200 });
  const a = await h!.agent({ name: "a", tools: ["workers/*"], script: oneCall("workers/send_email", { to: "x@example.com" }) });
  const raw = await connectRawWorker(daemon!.url, "token-default", [{ name: "send_email" }]);
  const ended = h!.ask(a, "go");
  const call = await raw.nextCall();
  await raw.drop();
  await h!.waitFor((e) => e.type === "dev.wardrik.turn.parked");
  const again = await connectRawWorker(daemon!.url, "token-default", [{ name: "send_email" }]);
  again.answer(call.callId, call.attempt, { sent: 1 });
  const end = await ended;
  expect(end.type).toBe("dev.wardrik.turn.completed");
  expect(end.data.reply).toBe('done: {"sent":1}');
  expect(h!.events.some((e) => e.type === "dev.wardrik.approval.granted")).toBe(false);
});

test("a worker of another org cannot answer a call", async () => {
  await setup({ graceMs: 100 });
  const a = await h!.agent({ name: "a", tools: ["workers/*"], script: oneCall("workers/send_email", {}) });
  const raw = await connectRawWorker(daemon!.url, "token-default", [{ name: "send_email" }]);
  // The turn parks and never ends here: its wait for the end times out after the test, unheard.
  h!.ask(a, "go").catch(() => undefined);
  const call = await raw.nextCall();
  await raw.drop();
  const asked = await h!.waitFor((e) => e.type === "dev.wardrik.approval.requested");
  const other = await connectRawWorker(daemon!.url, "token-b", [{ name: "send_email" }]);
  other.answer(call.callId, call.attempt, { forged: true });
  // The gateway holds no such call for org b: it hands the answer to the runtime, which refuses it.
  await waitFor(() => lateAnswers.length === 1, "the forged answer to reach the runtime", 10_000, 10);
  expect(await lateAnswers[0]).toBe(false);
  expect((await h!.store.calls.get(String(asked.data.call)))!.status).toBe("waiting");
});

test("an earlier attempt's late answer does not settle a call started again: the attempt out answers it", async () => {
  await setup({ graceMs: 200 });
  const a = await h!.agent({ name: "a", tools: ["workers/*"], script: oneCall("workers/upsert", { id: 7 }) });
  const tools = [{ name: "upsert", idempotent: true }];
  const first = await connectRawWorker(daemon!.url, "token-default", tools);
  const ended = h!.ask(a, "go");
  const one = await first.nextCall();
  expect(one.attempt).toBe(1);
  const second = await connectRawWorker(daemon!.url, "token-default", tools);
  await first.drop();
  // Lost after the grace; safe to repeat, so attempt 2 goes to the other worker.
  const two = await second.nextCall();
  expect(two).toMatchObject({ callId: one.callId, attempt: 2, ctx: { idempotencyKey: one.ctx.idempotencyKey } });
  // The first worker comes back with attempt 1's answer while attempt 2 runs: it must not end the call (attempt 2
  // could still be starting in another process, which would then run after the result was stored).
  const back = await connectRawWorker(daemon!.url, "token-default", tools);
  back.answer(one.callId, 1, { from: 1 });
  await waitFor(() => lateAnswers.length === 1, "attempt 1's answer to reach the runtime", 10_000, 10);
  expect(await lateAnswers[0]).toBe(false);
  expect((await h!.store.calls.get(one.callId))!).toMatchObject({ status: "running", attempts: 2 });
  expect(await h!.runtime.acceptLateAnswer("default", { callId: one.callId, attempt: 1, outcome: { ok: true, output: 1 } })).toBe(false);
  // The store's own check holds even for a writer that read the call before attempt 2 started.
  const stale = await h!.store.tx((w) =>
    h!.store.calls.finish(w, one.callId, { status: "completed", result: 1, code: null, costMicros: 0 }, w.now, 1),
  );
  expect(stale).toBe(false);
  second.answer(two.callId, 2, { from: 2 });
  const end = await ended;
  expect(end.type).toBe("dev.wardrik.turn.completed");
  expect(end.data.reply).toBe('done: {"from":2}');
  const completed = h!.events.filter((e) => e.type === "dev.wardrik.call.completed");
  expect(completed.map((e) => e.data.attempt)).toEqual([2]);
});

test("an approved re-run of a call whose answer was lost asks the workers again first: one that ran it answers, nothing runs again", async () => {
  await setup({ graceMs: 200 });
  const a = await h!.agent({ name: "a", tools: ["workers/*"], script: oneCall("workers/send_email", { to: "y@example.com" }) });
  const first = await connectRawWorker(daemon!.url, "token-default", [{ name: "send_email" }], "raw-first");
  const ended = h!.ask(a, "go");
  const call = await first.nextCall();
  await first.drop();
  const asked = await h!.waitFor((e) => e.type === "dev.wardrik.approval.requested");
  await h!.waitFor((e) => e.type === "dev.wardrik.turn.parked");
  // A worker that knows the call connects while a person decides (a restarted process over the same finished-calls store).
  const knows = await connectRawWorker(daemon!.url, "token-default", [{ name: "send_email" }], "raw-knows");
  await h!.runtime.approve((await h!.store.agents.get(a.id))!, String(asked.data.call));
  const until = Date.now() + 10_000;
  while (knows.recalls.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  expect(knows.recalls).toMatchObject([{ callId: call.callId, idempotencyKey: call.ctx.idempotencyKey }]);
  knows.answerRecall(knows.recalls[0]!.ask, call.callId, { state: "finished", attempt: 1, output: { sent: "once" } });
  const end = await ended;
  expect(end.data.reply).toBe('done: {"sent":"once"}');
  // Approved, but not sent again: the worker's answer settled it.
  expect(knows.calls).toEqual([]);
  const started = h!.events.filter((e) => e.type === "dev.wardrik.call.started" && e.data.call === call.callId);
  expect(started.map((e) => e.data.attempt)).toEqual([1]);
  expect(h!.events.find((e) => e.type === "dev.wardrik.call.completed")!.data).toMatchObject({ call: call.callId, attempt: 1 });
});

test("an approved re-run that no worker knows goes to a worker, as the next attempt", async () => {
  await setup({ graceMs: 200 });
  const a = await h!.agent({ name: "a", tools: ["workers/*"], script: oneCall("workers/send_email", { to: "z@example.com" }) });
  const first = await connectRawWorker(daemon!.url, "token-default", [{ name: "send_email" }], "raw-first");
  const ended = h!.ask(a, "go");
  const call = await first.nextCall();
  await first.drop();
  const asked = await h!.waitFor((e) => e.type === "dev.wardrik.approval.requested");
  await h!.waitFor((e) => e.type === "dev.wardrik.turn.parked");
  const other = await connectRawWorker(daemon!.url, "token-default", [{ name: "send_email" }], "raw-other");
  await h!.runtime.approve((await h!.store.agents.get(a.id))!, String(asked.data.call));
  const until = Date.now() + 10_000;
  while (other.recalls.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  other.answerRecall(other.recalls[0]!.ask, call.callId, { state: "unknown" });
  const again = await other.nextCall();
  expect(again).toMatchObject({ callId: call.callId, attempt: 2, ctx: { idempotencyKey: call.ctx.idempotencyKey } });
  other.answer(again.callId, 2, { sent: "approved" });
  expect((await ended).data.reply).toBe('done: {"sent":"approved"}');
});

test("a person can stop a call while the workers are still asked about it, after a restart", async () => {
  await setup({ graceMs: 60_000 });
  const script = oneCall("workers/send_email", { to: "w@example.com" });
  const a = await h!.agent({ name: "a", tools: ["workers/*"], script });
  // A worker of an older SDK: it never answers the question, so the asking lasts the grace.
  const old = await connectRawWorker(daemon!.url, "token-default", [{ name: "send_email" }], "raw-old");
  h!.ask(a, "go").catch(() => undefined);
  const call = await old.nextCall();
  // The runtime stops as in a crash: the call stays running in the record.
  crashed = h!;
  await crashed.runtime.close();
  await crashed.store.db.close();
  const h2 = await createHarness({ dir: crashed.dir, toolsets: [daemon!.gateway], workerGraceMs: 60_000 });
  h = h2;
  h2.script("a", script);
  await h2.runtime.recover();
  while (old.recalls.length === 0) await new Promise((r) => setTimeout(r, 10));
  await h2.runtime.kill((await h2.store.agents.get(a.id))!, call.callId);
  const end = await h2.waitFor((e) => e.type === "dev.wardrik.turn.completed");
  expect(end.data.reply).toBe("done: A person stopped this call before it finished.");
  expect(h2.events.find((e) => e.type === "dev.wardrik.call.killed")!.data).toMatchObject({ call: call.callId, code: "killed" });
  expect(h2.events.some((e) => e.type === "dev.wardrik.approval.requested")).toBe(false);
  expect(old.calls).toEqual([]);
});
