import { WardrikError, tooDeep, valueTooDeep, type FailureCode } from "@wardrik/protocol";
import { toMicros } from "../store/money.js";
import type { CallRow, TurnRow } from "../store/rows.js";
import { dayOf } from "../store/spend.js";
import { parseStored } from "../store/state-error.js";
import type { Writer } from "../store/store.js";
import type { ResolvedTool } from "../tools/tool-registry.js";
import type { ToolOutcome } from "../tools/toolset.js";
import { ASK_PERSON_TOOL, readQuestion } from "../tools/person-toolset.js";
import type { AgentDriver } from "./agent-driver.js";
import {
  askPersonCall,
  completeCall,
  failCall,
  killCall,
  loseCall,
  recordLateCost,
  retryCall,
  startCall,
  timeOutCall,
} from "./call-moves.js";
import { askWorkers, lastWorker, lostReason } from "./ask-workers.js";
import { invokeTool } from "./invoke-tool.js";
import { recoverCall } from "./recovery.js";
import { completeRoundIn } from "./round-results.js";
import type { RoundState } from "./round-state.js";
import { decideSavedCall } from "./decide-saved-call.js";
import { noWorkerMessage } from "./plan-round.js";
import { toolTelemetry } from "./telemetry.js";
import { isPlainJsonOutcome } from "../tools/plain-json.js";

/** A person stopped the call while the workers were asked about it. */
const STOPPED: ToolOutcome = { ok: false, kind: "killed", error: "A person stopped this call before it finished." };

/** A call safe to repeat that keeps losing its worker is given up after this many attempts. */
const MAX_LOST_ATTEMPTS = 5;

/**
 * Takes one open call of a round to where it can go: runs it (fresh, approved
 * or safe to repeat), waits for an answer a worker may still deliver, or
 * hands it to a person.
 */
export async function runCall(d: AgentDriver, turn: TurnRow, call: CallRow, turnSignal: AbortSignal, fresh: boolean): Promise<void> {
  if (turnSignal.aborted) return;
  const scope = { org: d.org, agentId: d.id };
  // After a start a worker may not have reconnected yet, and in a cluster another node's workers may drop out of this
  // node's view for a moment (their node frozen, its heartbeat late): wait for one while the grace lasts rather than fail.
  const tool = await d.tools.findOrWait(call.tool, scope, d.graceLeftMs());
  const args = parseStored(call.args, `call ${call.id} arguments`);
  if (call.status === "planned") {
    const decided = await decideSavedCall(d, turn, call, args, tool);
    if (decided !== "approved") return;
    call = { ...call, status: "approved" };
  }
  if (call.tool === ASK_PERSON_TOOL && (call.status === "running" || call.status === "approved")) {
    await askPerson(d, turn, call, call.status, args);
    return;
  }
  if (call.status === "approved") {
    if (call.attempts > 0) {
      // A person approved running again a call whose answer was lost: a worker that ran it after all answers instead.
      const answer = await askWorkers(d, call, Date.now(), turnSignal);
      if (turnSignal.aborted) return;
      if (answer === "killed") return settleOutcome(d, turn, call, STOPPED, 0, call.attempts);
      if (answer?.known) {
        await settleOutcome(d, turn, call, answer.outcome, 0, answer.attempt);
        return;
      }
    }
    if (!tool) {
      await settle(d, turn, call, { isError: true, output: `Tool ${call.tool} is no longer available.` }, (w) =>
        failCall(w, d.store, d.ref, call, `Tool ${call.tool} is no longer available.`, "unknown_tool", 0, "approved"),
      );
      return;
    }
    const attempt = call.attempts + 1;
    if (!(await d.store.tx((w) => startCall(w, d.store, d.ref, call, attempt), d.org))) return;
    await dispatch(d, turn, call, tool, args, attempt, turnSignal);
    return;
  }
  if (call.status !== "running") return;
  if (fresh) {
    // Not sent anywhere yet: with no tool to send it to, nothing ran, so it fails and nobody is asked whether it ran.
    if (!tool) return failUnserved(d, turn, call);
    await dispatch(d, turn, call, tool, args, call.attempts, turnSignal);
    return;
  }
  // Interrupted mid-call (a restart, a lost node): the recovery rule decides.
  const action = recoverCall({ status: call.status, retrySafe: call.retry_safe === 1, answerMayArrive: call.tool.startsWith("workers/") });
  if (action === "rerun") {
    if (!tool) return failUnserved(d, turn, call);
    const attempt = call.attempts + 1;
    const why = { code: "lost" as const, reason: "The call was interrupted before its answer was saved; it is safe to repeat." };
    if (!(await d.store.tx((w) => retryCall(w, d.store, d.ref, call, attempt, why), d.org))) return;
    await dispatch(d, turn, call, tool, args, attempt, turnSignal);
    return;
  }
  // Its worker may have run it: ask the workers (those that reconnect within the grace too) before a person.
  await settleLost(d, turn, call, action === "await_answer" ? Date.now() + d.graceLeftMs() : 0, turnSignal);
}

/** A person/ask call the policy let through: it waits for a person's answer (its turn parks), or fails for bad arguments. */
async function askPerson(d: AgentDriver, turn: TurnRow, call: CallRow, from: "running" | "approved", args: unknown): Promise<void> {
  const question = readQuestion(args);
  if ("error" in question) {
    const error = `The arguments of person/ask are wrong: ${question.error}.`;
    await settle(d, turn, call, { isError: true, output: error }, (w) => failCall(w, d.store, d.ref, call, error, "invalid_args", 0, from));
    return;
  }
  await d.store.tx((w) => askPersonCall(w, d.store, d.ref, call, from, question), d.org);
}

/** A call to be sent (fresh, or again) whose tool nobody serves after the grace: it fails, with no worker to blame. */
async function failUnserved(d: AgentDriver, turn: TurnRow, call: CallRow): Promise<void> {
  const error = call.tool.startsWith("workers/") ? noWorkerMessage(call.tool) : `Tool ${call.tool} is no longer available.`;
  await settle(d, turn, call, { isError: true, output: error }, (w) => failCall(w, d.store, d.ref, call, error, "no_worker", 0));
}

/**
 * A call whose answer was lost, safe or not to repeat: a worker that knows it
 * settles it with its outcome; else it waits for a person, told where it ran.
 */
async function settleLost(
  d: AgentDriver,
  turn: TurnRow,
  call: CallRow,
  until: number,
  turnSignal: AbortSignal,
  costMicros = 0,
): Promise<void> {
  // As recorded now: the attempt that went out last, and the worker it went to (noted after the call started).
  const recorded = (await d.store.calls.get(call.id)) ?? call;
  const answer = until > 0 ? await askWorkers(d, recorded, until, turnSignal) : undefined;
  if (turnSignal.aborted) return;
  if (answer === "killed") return settleOutcome(d, turn, call, STOPPED, costMicros, recorded.attempts);
  if (answer?.known) return settleOutcome(d, turn, call, answer.outcome, costMicros, answer.attempt);
  const last = lastWorker(recorded);
  const args = parseStored(call.args, `call ${call.id} arguments`);
  await settleCost(d, call, costMicros, (w) => loseCall(w, d.store, d.ref, call, args, lostReason(last, answer), last));
}

/** Runs attempts of a call until it is final, handed to a person, or its turn stops. */
async function dispatch(
  d: AgentDriver,
  turn: TurnRow,
  call: CallRow,
  tool: ResolvedTool,
  args: unknown,
  first: number,
  turnSignal: AbortSignal,
): Promise<void> {
  for (let attempt = first; ; attempt++) {
    if (tool.toolset.callInTransaction) {
      await runInTransaction(d, turn, call, tool, args, attempt);
      return;
    }
    const started = d.opts.telemetry.toolCallStarted(toolTelemetry(d, turn, call, tool, args, attempt));
    let ran: Awaited<ReturnType<typeof invokeTool>>;
    try {
      ran = await invokeTool(d, turn, call, tool, args, attempt, turnSignal, started?.traceparent);
    } catch (err) {
      d.opts.telemetry.toolCallEnded(started, undefined, err);
      throw err;
    }
    d.opts.telemetry.toolCallEnded(started, ran.outcome);
    const { outcome, cost } = ran;
    const costMicros = toMicros(cost);
    if (turnSignal.aborted) {
      // The turn was cancelled or timed out (its end closed the call), or the daemon is stopping (recovery resumes it).
      if (costMicros > 0 && !d.closed)
        await d.store.tx((w) => recordLateCost(w, d.store, d.ref, call, costMicros, dayOf(d.store.clock.now())), d.org);
      return;
    }
    const safe = call.retry_safe === 1;
    if (!outcome.ok && outcome.kind === "timeout" && safe && attempt < 2) {
      const why = { code: "timeout" as const, reason: outcome.error, timeoutS: d.opts.toolTimeoutMs / 1000 };
      if (!(await settleCost(d, call, costMicros, (w) => retryCall(w, d.store, d.ref, call, attempt + 1, why)))) return;
      continue;
    }
    if (!outcome.ok && outcome.kind === "lost" && safe && attempt < MAX_LOST_ATTEMPTS) {
      const why = { code: "lost" as const, reason: outcome.error };
      if (!(await settleCost(d, call, costMicros, (w) => retryCall(w, d.store, d.ref, call, attempt + 1, why)))) return;
      continue;
    }
    await settleOutcome(d, turn, call, outcome, costMicros, attempt, turnSignal);
    return;
  }
}

/** A tool whose effect commits with its result: it runs inside the commit that stores the result. */
async function runInTransaction(
  d: AgentDriver,
  turn: TurnRow,
  call: CallRow,
  tool: ResolvedTool,
  args: unknown,
  attempt: number,
): Promise<void> {
  const state = d.progress.round(turn.id);
  await d.store
    .tx(async (w) => {
      const started = d.opts.telemetry.toolCallStarted(toolTelemetry(d, turn, call, tool, args, attempt));
      let outcome: ToolOutcome;
      try {
        outcome = await tool.toolset.callInTransaction!(w, tool.local, args, {
          agent: d.id,
          org: d.org,
          run: turn.id,
          callId: call.id,
          idempotencyKey: call.idempotency_key,
          attempt,
          signal: new AbortController().signal,
          timeoutMs: d.opts.toolTimeoutMs,
          cost: () => undefined,
          traceparent: started?.traceparent,
        });
      } catch (err) {
        d.opts.telemetry.toolCallEnded(started, undefined, err);
        throw err;
      }
      d.opts.telemetry.toolCallEnded(started, outcome);
      const result = outcome.ok ? { isError: false, output: outcome.output } : { isError: true, output: outcome.error };
      const moved = outcome.ok
        ? await completeCall(w, d.store, d.ref, call, "running", outcome.output, 0, attempt)
        : await failCall(w, d.store, d.ref, call, outcome.error, "tool_error", 0);
      if (!moved) throw new RolledBack();
      await completeIfLast(d, w, turn, call, result, state);
    }, d.org)
    .catch((err: unknown) => {
      if (!(err instanceof RolledBack)) throw err;
    });
}

/** Thrown to undo a transaction whose call changed meanwhile (its write must not stand alone). */
class RolledBack extends Error {}

/** Commits a call's final outcome, or hands it to a person when its answer was lost. */
async function settleOutcome(
  d: AgentDriver,
  turn: TurnRow,
  call: CallRow,
  outcome: ToolOutcome,
  costMicros: number,
  attempt: number,
  turnSignal: AbortSignal = new AbortController().signal,
): Promise<void> {
  const from = call.status === "approved" ? "running" : call.status;
  if (outcome.ok) {
    let output: unknown;
    // Measured before anything serialises it: a result from an MCP server or another node may nest without end.
    // A worker's result was parsed within the limit and is plain JSON already (plain-json.ts): it is taken as it is.
    try {
      if (isPlainJsonOutcome(outcome)) output = outcome.output;
      else {
        if (valueTooDeep(outcome.output, d.opts.jsonDepth)) throw tooDeep(`The result of ${call.tool}`, d.opts.jsonDepth);
        output = JSON.parse(JSON.stringify(outcome.output ?? null)) as unknown;
      }
    } catch (err) {
      const error = WardrikError.isInstance(err)
        ? err.message
        : `The tool returned a result that is not JSON-serialisable: ${(err as Error).message}`;
      await settle(d, turn, call, { isError: true, output: error }, (w) =>
        failCall(w, d.store, d.ref, call, error, "bad_result", costMicros),
      );
      return;
    }
    await settle(d, turn, call, { isError: false, output }, (w) =>
      completeCall(w, d.store, d.ref, call, from, output, costMicros, attempt),
    );
    return;
  }
  const error = outcome.error;
  switch (outcome.kind) {
    case "lost":
      // The worker that ran it left and did not come back within the grace: ask the others once. Its node died with
      // it: its worker is on its way to another node, so the others are asked for the whole grace.
      await settleLost(d, turn, call, Date.now() + (outcome.nodeGone ? d.opts.reconnectGraceMs : 0), turnSignal, costMicros);
      return;
    case "timeout": {
      const t = { error, attempt, timeoutS: d.opts.toolTimeoutMs / 1000, costMicros };
      await settle(d, turn, call, { isError: true, output: error }, (w) => timeOutCall(w, d.store, d.ref, call, t));
      return;
    }
    case "killed": {
      const message = "A person stopped this call before it finished.";
      await settle(d, turn, call, { isError: true, output: message }, (w) =>
        killCall(w, d.store, d.ref, call, "running", message, "killed", costMicros),
      );
      return;
    }
    default: {
      const code: FailureCode = outcome.kind === "unavailable" ? "no_worker" : "tool_error";
      await settle(d, turn, call, { isError: true, output: error }, (w) => failCall(w, d.store, d.ref, call, error, code, costMicros));
    }
  }
}

/** Commits a final move of a call; the last one of a round the driver saved also completes the round. */
async function settle(
  d: AgentDriver,
  turn: TurnRow,
  call: CallRow,
  result: { isError: boolean; output: unknown },
  move: (w: Writer) => Promise<boolean>,
): Promise<void> {
  const state = d.progress.round(turn.id);
  try {
    await d.store.tx(async (w) => {
      if (!(await move(w))) return;
      await completeIfLast(d, w, turn, call, result, state);
    }, d.org);
  } catch (err) {
    state?.unsettle(call.id);
    throw err;
  }
}

async function completeIfLast(
  d: AgentDriver,
  w: Writer,
  turn: TurnRow,
  call: CallRow,
  result: { isError: boolean; output: unknown },
  state: RoundState | undefined,
): Promise<void> {
  if (state?.round !== call.round) return;
  state.settle(call.id, result.isError, result.output);
  if (state.complete) await completeRoundIn(d, w, turn, state);
}

/** Commits a move that keeps the call open, with the cost its attempt reported. */
async function settleCost(d: AgentDriver, call: CallRow, costMicros: number, move: (w: Writer) => Promise<boolean>): Promise<boolean> {
  return d.store.tx(async (w) => {
    if (!(await move(w))) return false;
    await d.store.calls.addCost(w, call.id, costMicros);
    await d.store.turns.addSpend(w, call.run, costMicros, "tool");
    return true;
  }, d.org);
}
