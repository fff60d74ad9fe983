import { isRetryableFailure, type FailureCode } from "@wardrik/protocol";
import type { NewCall } from "../store/calls.js";
import { toUsd } from "../store/money.js";
import type { CallStatus } from "../store/rows.js";
import type { AgentRef, Store, Writer } from "../store/store.js";
import type { WorkerRef } from "../tools/toolset.js";
import { nextCall, type CallInput } from "./call-machine.js";
import { LOST_ANSWER } from "./types.js";
import { childRunOf } from "../ids.js";
import { AGENTS_NAMESPACE } from "../tools/agents-toolset.js";

const AGENTS_PREFIX = `${AGENTS_NAMESPACE}/`;

/**
 * A call's moves, each in the caller's transaction: the call machine says
 * which moves are allowed and which events record them, the store's
 * commands write them. A move that lost a race (the call changed meanwhile)
 * writes nothing and returns false.
 */

export interface CallRef {
  id: string;
  tool: string;
  run: string;
  /** Set when the move carries the answer of this attempt: it is skipped if a later attempt has started. */
  answerOf?: number;
}

function move(from: CallStatus | "new", input: CallInput) {
  const m = nextCall(from, input);
  if (!m) throw new Error(`A ${from} call cannot ${input}.`);
  return m;
}

function failure(code: FailureCode) {
  return { code, retryable: isRetryableFailure(code) };
}

/** The events of a call saved with its round (decided as it was saved). */
export function recordNewCall(w: Writer, agent: AgentRef, run: string, c: NewCall): void {
  const input: CallInput = c.status === "running" ? "allow" : c.status === "waiting" ? "ask" : c.status === "denied" ? "deny" : "invalid";
  emitDecision(w, agent, run, c, input, move("new", input).events);
}

/** A call saved undecided (state format 1) gets its decision now. */
export async function decidePlanned(w: Writer, store: Store, agent: AgentRef, run: string, c: NewCall): Promise<boolean> {
  const input: CallInput = c.status === "running" ? "allow" : c.status === "waiting" ? "ask" : c.status === "denied" ? "deny" : "invalid";
  const m = move("planned", input);
  if (!(await store.calls.decide(w, c.id, c, w.now))) return false;
  emitDecision(
    w,
    agent,
    run,
    c,
    input,
    m.events.filter((e) => e !== "call.started"),
  );
  return true;
}

function emitDecision(w: Writer, agent: AgentRef, run: string, c: NewCall, input: CallInput, events: readonly string[]): void {
  const opts = { run, subject: c.id };
  for (const type of events) {
    if (type === "call.failed") {
      w.emit(
        agent,
        "call.failed",
        { call: c.id, tool: c.tool, cost_usd: 0, error: String(c.result ?? ""), ...failure(toCode(c.errorCode, "invalid_args")) },
        opts,
      );
    } else if (type === "call.decided") {
      const base = { call: c.id, tool: c.tool, reason: c.reason ?? "", rule: c.rule };
      // A deny ends the call, so it is on the record as a failure with its code.
      const data =
        input === "allow" || input === "ask" ? { ...base, decision: input } : { ...base, decision: "deny" as const, ...failure("denied") };
      w.emit(agent, "call.decided", data, opts);
    } else if (type === "approval.requested") {
      w.emit(agent, "approval.requested", { call: c.id, tool: c.tool, args: c.args, reason: c.reason ?? "", rule: c.rule }, opts);
    } else if (type === "call.started") {
      w.emit(agent, "call.started", startedData(c, 1, c.id), opts);
    }
  }
}

/** call.started's data; an agents/NAME call's names its child turn, whose ID its own ID fixes (childRunOf). */
function startedData(call: { id: string; tool: string }, attempt: number, idempotencyKey: string) {
  const child = call.tool.startsWith(AGENTS_PREFIX)
    ? { agent: call.tool.slice(AGENTS_PREFIX.length), run: childRunOf(call.id) }
    : undefined;
  return { call: call.id, tool: call.tool, attempt, idempotency_key: idempotencyKey, ...(child ? { child } : {}) };
}

function toCode(code: string | null | undefined, fallback: FailureCode): FailureCode {
  return (code as FailureCode | null | undefined) ?? fallback;
}

/** waiting -> approved; `edited` carries the arguments a person changed (the record keeps both). */
export async function approveCall(
  w: Writer,
  store: Store,
  agent: AgentRef,
  call: CallRef,
  edited?: { args: unknown; original: unknown },
  by?: string,
): Promise<boolean> {
  move("waiting", "approve");
  if (!(await store.calls.approve(w, call.id, edited?.args))) return false;
  const data = {
    call: call.id,
    tool: call.tool,
    ...(edited ? { args: edited.args, original_args: edited.original } : {}),
    ...(by !== undefined ? { by } : {}),
  };
  w.emit(agent, "approval.granted", data, { run: call.run, subject: call.id });
  return true;
}

/** waiting -> denied by a person (`by`, when known). */
export async function refuseCall(w: Writer, store: Store, agent: AgentRef, call: CallRef, reason: string, by?: string): Promise<boolean> {
  const m = move("waiting", "refuse");
  const ended = await store.calls.finish(
    w,
    call.id,
    { status: m.to as "denied", result: `A person refused this call: ${reason}`, code: "denied", costMicros: 0 },
    w.now,
  );
  if (!ended) return false;
  w.emit(
    agent,
    "approval.denied",
    { call: call.id, tool: call.tool, reason, ...(by !== undefined ? { by } : {}), ...failure("denied") },
    { run: call.run, subject: call.id },
  );
  return true;
}

/** approved -> running: the first attempt, or the next one after a person approved a lost call. */
export async function startCall(
  w: Writer,
  store: Store,
  agent: AgentRef,
  call: CallRef & { idempotency_key: string },
  attempt: number,
): Promise<boolean> {
  move("approved", "start");
  if (!(await store.calls.start(w, call.id, "approved", attempt, w.now))) return false;
  w.emit(agent, "call.started", startedData(call, attempt, call.idempotency_key), { run: call.run, subject: call.id });
  return true;
}

/** running -> running: a call safe to repeat runs again with the same key (after a crash, or its worker was lost). */
export async function retryCall(
  w: Writer,
  store: Store,
  agent: AgentRef,
  call: CallRef & { idempotency_key: string },
  attempt: number,
  why: { code: FailureCode; reason: string; timeoutS?: number },
): Promise<boolean> {
  const m = move("running", why.code === "timeout" ? "retry_after_timeout" : "retry");
  if (!(await store.calls.start(w, call.id, "running", attempt, w.now))) return false;
  const opts = { run: call.run, subject: call.id };
  for (const type of m.events) {
    if (type === "call.retried")
      w.emit(agent, "call.retried", { call: call.id, tool: call.tool, attempt, reason: why.reason, ...failure(why.code) }, opts);
    else if (type === "call.timed_out") {
      const t = { error: why.reason, attempt: attempt - 1, timeout_s: why.timeoutS ?? 0, will_retry: true, cost_usd: 0 };
      w.emit(agent, "call.timed_out", { call: call.id, tool: call.tool, ...t, ...failure("timeout") }, opts);
    } else w.emit(agent, "call.started", startedData(call, attempt, call.idempotency_key), opts);
  }
  return true;
}

/** The call's answer arrived: running (or waiting after a loss, or approved) -> completed. */
export async function completeCall(
  w: Writer,
  store: Store,
  agent: AgentRef,
  call: CallRef,
  from: CallStatus,
  output: unknown,
  costMicros: number,
  attempt: number,
): Promise<boolean> {
  move(from, "complete");
  if (!(await store.calls.finish(w, call.id, { status: "completed", result: output, code: null, costMicros }, w.now, call.answerOf)))
    return false;
  await store.turns.addSpend(w, call.run, costMicros, "tool");
  w.emit(
    agent,
    "call.completed",
    { call: call.id, tool: call.tool, output, cost_usd: toUsd(costMicros), attempt },
    { run: call.run, subject: call.id },
  );
  return true;
}

/** running -> failed (also approved, when its tool is gone, and waiting, when a lost call's late answer is an error). */
export async function failCall(
  w: Writer,
  store: Store,
  agent: AgentRef,
  call: CallRef,
  error: string,
  code: FailureCode,
  costMicros: number,
  from: "running" | "approved" | "waiting" = "running",
): Promise<boolean> {
  move(from, "fail");
  if (!(await store.calls.finish(w, call.id, { status: "failed", result: error, code, costMicros }, w.now, call.answerOf))) return false;
  await store.turns.addSpend(w, call.run, costMicros, "tool");
  w.emit(
    agent,
    "call.failed",
    { call: call.id, tool: call.tool, error, cost_usd: toUsd(costMicros), ...failure(code) },
    { run: call.run, subject: call.id },
  );
  return true;
}

/** running -> timed_out: the call took longer than its timeout and will not be tried again. */
export async function timeOutCall(
  w: Writer,
  store: Store,
  agent: AgentRef,
  call: CallRef,
  t: { error: string; attempt: number; timeoutS: number; costMicros: number },
): Promise<boolean> {
  move("running", "time_out");
  if (!(await store.calls.finish(w, call.id, { status: "timed_out", result: t.error, code: "timeout", costMicros: t.costMicros }, w.now)))
    return false;
  await store.turns.addSpend(w, call.run, t.costMicros, "tool");
  w.emit(
    agent,
    "call.timed_out",
    {
      call: call.id,
      tool: call.tool,
      error: t.error,
      attempt: t.attempt,
      timeout_s: t.timeoutS,
      will_retry: false,
      cost_usd: toUsd(t.costMicros),
      ...failure("timeout"),
    },
    { run: call.run, subject: call.id },
  );
  return true;
}

/**
 * running -> waiting: the call may have run but its answer was lost, and no
 * worker knows it; a person decides. `reason` starts with LOST_ANSWER and
 * says where the call was last sent (`worker`), when that is known.
 */
export async function loseCall(
  w: Writer,
  store: Store,
  agent: AgentRef,
  call: CallRef,
  args: unknown,
  reason: string = LOST_ANSWER,
  worker?: WorkerRef,
): Promise<boolean> {
  move("running", "lose");
  if (!(await store.calls.awaitPerson(w, call.id, reason))) return false;
  const where = worker ? { worker: { name: worker.name, instance: worker.instance, ...(worker.node ? { node: worker.node } : {}) } } : {};
  w.emit(
    agent,
    "approval.requested",
    { call: call.id, tool: call.tool, args, reason, rule: null, lost: true, ...where, ...failure("lost") },
    { run: call.run, subject: call.id },
  );
  return true;
}

/**
 * failed -> completed: the call was recorded failed because no worker served
 * it, but a worker had run an earlier attempt and its answer came late. Only
 * a call that failed for that reason changes, and only with an answer of an
 * attempt that had been sent to a worker.
 */
export async function completeLate(
  w: Writer,
  store: Store,
  agent: AgentRef,
  call: CallRef,
  output: unknown,
  attempt: number,
): Promise<boolean> {
  move("failed", "complete_late");
  if (!(await store.calls.completeLate(w, call.id, output, attempt))) return false;
  w.emit(
    agent,
    "call.completed",
    { call: call.id, tool: call.tool, output, cost_usd: 0, attempt, late: true },
    { run: call.run, subject: call.id },
  );
  return true;
}

/** An open call is stopped (a person's kill, or its turn ended). */
export async function killCall(
  w: Writer,
  store: Store,
  agent: AgentRef,
  call: CallRef,
  from: CallStatus,
  error: string,
  code: FailureCode,
  costMicros = 0,
): Promise<boolean> {
  move(from, "kill");
  if (!(await store.calls.finish(w, call.id, { status: "killed", result: error, code, costMicros }, w.now))) return false;
  await store.turns.addSpend(w, call.run, costMicros, "tool");
  w.emit(
    agent,
    "call.killed",
    { call: call.id, tool: call.tool, error, cost_usd: toUsd(costMicros), ...failure(code) },
    { run: call.run, subject: call.id },
  );
  return true;
}

/** Closes every open call of a turn that ended. */
export async function killOpenCalls(
  w: Writer,
  store: Store,
  agent: AgentRef,
  run: string,
  error: string,
  code: FailureCode,
): Promise<void> {
  for (const c of await store.calls.closeOpen(w, run, error, code, w.now)) {
    w.emit(agent, "call.killed", { call: c.id, tool: c.tool, error, ...failure(code) }, { run, subject: c.id });
  }
}

/** A cost a tool reported after its call ended (its turn was cancelled meanwhile). */
export async function recordLateCost(
  w: Writer,
  store: Store,
  agent: AgentRef,
  call: CallRef,
  costMicros: number,
  day: string,
): Promise<void> {
  await store.calls.addCost(w, call.id, costMicros);
  await store.turns.addSpend(w, call.run, costMicros, "tool");
  await store.spend.add(w, agent.id, day, 0, costMicros);
  w.emit(agent, "call.cost_reported", { call: call.id, tool: call.tool, cost_usd: toUsd(costMicros) }, { run: call.run, subject: call.id });
}

/** running|approved -> waiting: a person/ask call parks its turn with its question (`choices`: the answers it takes). */
export async function askPersonCall(
  w: Writer,
  store: Store,
  agent: AgentRef,
  call: CallRef,
  from: "running" | "approved",
  question: { question: string; choices?: string[] | undefined },
): Promise<boolean> {
  move(from, "ask_person");
  if (!(await store.calls.askPerson(w, call.id, from))) return false;
  const data = { call: call.id, tool: call.tool, question: question.question, ...(question.choices ? { choices: question.choices } : {}) };
  w.emit(agent, "question.asked", data, { run: call.run, subject: call.id });
  return true;
}

/** waiting -> completed: a person (`by`, when known) answered the question; `{ answer }` is the call's output. */
export async function answerCall(w: Writer, store: Store, agent: AgentRef, call: CallRef, answer: string, by?: string): Promise<boolean> {
  const m = move("waiting", "answer");
  const output = { answer };
  if (!(await store.calls.answer(w, call.id, output, w.now))) return false;
  const opts = { run: call.run, subject: call.id };
  for (const type of m.events) {
    if (type === "question.answered")
      w.emit(agent, type, { call: call.id, tool: call.tool, answer, ...(by !== undefined ? { by } : {}) }, opts);
    else w.emit(agent, "call.completed", { call: call.id, tool: call.tool, output, cost_usd: 0 }, opts);
  }
  return true;
}
