import type { WorkerCost, WorkerResult } from "@wardrik/protocol";
import type { Logger } from "../../log/logger.js";
import { LOST_ANSWER } from "@wardrik/protocol";
import type { CallStopWatch, LateAnswer, ToolCallContext, ToolOutcome, WorkerRef } from "../toolset.js";
import { stopWatchOf } from "../call-stopper.js";
import { CallTable } from "@wardrik/protocol";
import type { WorkerConnection } from "./worker-connection.js";
import { plainJsonOutcome } from "../plain-json.js";

/** Someone who waits for a call's answer: the runtime that sent it, or one that took it over. */
interface Waiter {
  /** Set for a caller that sent the call (its stop stops it, its `cost` counts what the worker reports). */
  readonly ctx: ToolCallContext | undefined;
  readonly resolve: (outcome: ToolOutcome | undefined) => void;
  /** The caller's stop, and what stops listening to it. */
  stop: CallStopWatch | undefined;
  unlisten: (() => void) | undefined;
}

/** A call sent to a worker (or awaited from one) and not answered yet. */
interface PendingCall {
  readonly org: string;
  readonly callId: string;
  tool: string;
  /** The attempt whose answer settles it; an earlier attempt's answer is late. */
  attempt: number;
  /** The worker running it; undefined once that worker is gone (or for a call adopted after a restart). */
  worker: WorkerConnection | undefined;
  waiters: Waiter[];
  done: boolean;
  /** Its worker's answer came (not lost, stopped or left for the next daemon). */
  answered: boolean;
  timer: NodeJS.Timeout | undefined;
}

export interface WorkerCallsOptions {
  /** How long a call whose worker is gone waits for that worker (or another connection) to deliver its answer. */
  graceMs: number;
  /** Largest serialised result; a bigger one fails the call. */
  maxResultBytes: number;
  log: Logger;
  /** An answer for a call nobody here waits for (a worker that kept it through a restart). */
  onLateAnswer?: ((org: string, answer: LateAnswer) => void) | undefined;
  /**
   * A call left for a worker: which one (recorded, so a person asked about a lost answer learns where it ran).
   * `answered`: whether the call has had its answer since (a note written later can be left out then).
   */
  onDispatched?: ((org: string, callId: string, worker: WorkerRef, answered: () => boolean) => void) | undefined;
}

/** What a waiter that took a call over holds: its answer, and a way to say which worker runs it now. */
export interface Watch {
  readonly outcome: Promise<ToolOutcome | undefined>;
  /** A worker said it runs the call as `attempt`: its answer (from any connection of the org) settles the watch. */
  bind(worker: WorkerConnection, attempt: number): void;
  /** Stops waiting (undefined to this watch); the call itself goes on for any other waiter. */
  cancel(): void;
}

/**
 * The calls in flight to workers. The gateway only carries calls: the
 * runtime decides what is retried and when a call has timed out. When a
 * worker goes away mid-call, the call waits a grace period for its answer,
 * which a reconnecting worker delivers (from any connection of the same
 * org); after that it is reported lost and the runtime applies its rule.
 * A call sent again while it is still in flight here (a new owner took its
 * agent over) joins the one in flight: both get its one answer.
 */
export class WorkerCalls {
  private readonly pending = new CallTable<PendingCall>();

  constructor(private readonly opts: WorkerCallsOptions) {}

  /** Sends a call to `worker` and resolves with its outcome; joins the call when it is in flight here already. */
  start(tool: string, args: unknown, ctx: ToolCallContext, worker: WorkerConnection): Promise<ToolOutcome> {
    const existing = this.pending.get(ctx.callId);
    if (existing && !existing.done && existing.org === ctx.org) {
      this.opts.log("info", "a call sent again while in flight joins it", { callId: ctx.callId, attempt: existing.attempt });
      return this.wait(existing, ctx);
    }
    const call: PendingCall = {
      org: ctx.org,
      callId: ctx.callId,
      tool,
      attempt: ctx.attempt,
      worker: undefined,
      waiters: [],
      done: false,
      answered: false,
      timer: undefined,
    };
    this.pending.set(ctx.callId, call);
    const outcome = this.wait(call, ctx);
    this.dispatch(call, args, ctx, worker);
    return outcome;
  }

  /** A caller's wait: finish() settles it with `lost` where a watch hears undefined. */
  private wait(call: PendingCall, ctx: ToolCallContext): Promise<ToolOutcome> {
    return new Promise<ToolOutcome>((resolve) => {
      // finish() resolves a waiter with a ctx with an outcome, never undefined.
      const waiter: Waiter = { ctx, resolve: resolve as Waiter["resolve"], stop: undefined, unlisten: undefined };
      call.waiters.push(waiter);
      // The runtime's stop watch: reading ctx.signal would make the AbortSignal it spares.
      waiter.stop = stopWatchOf(ctx);
      waiter.unlisten = waiter.stop.onStop(() => this.stop(call, waiter));
    });
  }

  private dispatch(call: PendingCall, args: unknown, ctx: ToolCallContext, worker: WorkerConnection): void {
    this.bindTo(call, worker);
    worker.sendText(callText(call, args, ctx));
    this.opts.onDispatched?.(call.org, call.callId, worker.ref(), () => call.answered);
  }

  private bindTo(call: PendingCall, worker: WorkerConnection): void {
    if (call.worker) call.worker.inFlight -= 1;
    if (call.timer) clearTimeout(call.timer);
    call.timer = undefined;
    call.worker = worker;
    worker.inFlight += 1;
  }

  /**
   * A waiter's signal aborted. A waiter whose node is only stopping (or gave
   * the agent up) leaves, and the call goes on for the others; with nobody
   * left, or for a kill, a timeout or a cancelled turn, the worker is told why
   * and the call ends for every waiter.
   */
  private stop(call: PendingCall, waiter: Waiter): void {
    if (call.done) return;
    const why = waiter.stop?.reason?.why ?? "killed";
    const full = `workers/${call.tool}`;
    const error =
      why === "killed"
        ? `${full} was killed before it finished.`
        : why === "timeout"
          ? `${full} timed out.`
          : `${full} was stopped because its turn ended before it finished.`;
    const outcome: ToolOutcome = { ok: false, kind: why === "timeout" ? "timeout" : "killed", error };
    if (why === "shutdown" && call.waiters.length > 1) {
      call.waiters = call.waiters.filter((w) => w !== waiter);
      waiter.unlisten?.();
      waiter.resolve(outcome);
      return;
    }
    // On shutdown the worker keeps the call running and hands its answer to the next daemon.
    if (why !== "shutdown") call.worker?.send({ type: "abort", callId: call.callId, reason: why });
    this.finish(call, outcome);
  }

  /**
   * Waits for the answer of a call this process did not send: one a previous
   * process (or another node) sent to a worker that may deliver it here.
   * Only the answer of `attempt` (or a later one) settles it; when the call is
   * in flight here already, the watch joins it.
   */
  watch(org: string, callId: string, attempt: number, timeoutMs: number): Watch {
    const existing = this.pending.get(callId);
    let call: PendingCall;
    if (existing && !existing.done && existing.org === org) call = existing;
    else {
      call = { org, callId, tool: "", attempt, worker: undefined, waiters: [], done: false, answered: false, timer: undefined };
      this.pending.set(callId, call);
    }
    let waiter: Waiter | undefined;
    const outcome = new Promise<ToolOutcome | undefined>((resolve) => {
      waiter = { ctx: undefined, resolve, stop: undefined, unlisten: undefined };
      call.waiters.push(waiter);
    });
    const timer = setTimeout(() => leave(), Math.max(0, timeoutMs));
    const leave = (): void => {
      clearTimeout(timer);
      if (!waiter || call.done) return;
      call.waiters = call.waiters.filter((w) => w !== waiter);
      waiter.resolve(undefined);
      // Nobody waits any longer: an answer that comes now is a late one.
      if (call.waiters.length === 0) this.finish(call, undefined);
    };
    void outcome.finally(() => clearTimeout(timer));
    return {
      outcome,
      bind: (worker, running) => {
        if (call.done || call.worker === worker) return;
        call.attempt = Math.min(call.attempt, running);
        this.bindTo(call, worker);
      },
      cancel: leave,
    };
  }

  /** A worker's answer: for the call it belongs to (from any connection of its org), or a late one. */
  result(conn: WorkerConnection, message: WorkerResult, checkSize: boolean): void {
    const outcome = this.toOutcome(message, checkSize);
    const call = this.pending.get(message.callId);
    // An earlier attempt's answer does not settle a later one: that attempt may be on its way to another worker
    // process, which would then run the call after its result was stored. The runtime decides what it is worth.
    if (!call || call.done || message.attempt < call.attempt) {
      const late = { callId: message.callId, attempt: message.attempt, outcome };
      if (this.opts.onLateAnswer) this.opts.onLateAnswer(conn.org, late);
      else this.opts.log("debug", "late result dropped", { ...conn.describe(), callId: message.callId, attempt: message.attempt });
      return;
    }
    if (call.org !== conn.org) {
      this.opts.log("warn", "a worker answered a call of another org; dropped", { ...conn.describe(), callId: message.callId });
      return;
    }
    call.answered = true;
    this.finish(call, outcome);
  }

  private toOutcome(message: WorkerResult, checkSize: boolean): ToolOutcome {
    if (!message.ok) return { ok: false, kind: "failed", error: truncate(message.error, this.opts.maxResultBytes) };
    // Parsed from the frame within the depth limit (readFrame): plain JSON, which the runtime need not copy again.
    const output = message.output ?? null;
    if (checkSize) {
      const size = Buffer.byteLength(JSON.stringify(output));
      if (size > this.opts.maxResultBytes) {
        const tool = this.pending.get(message.callId)?.tool;
        const name = tool ? `workers/${tool}` : "The tool";
        return {
          ok: false,
          kind: "failed",
          error: `${name} returned ${size} bytes; the limit is ${this.opts.maxResultBytes}. Return only what the model needs.`,
        };
      }
    }
    return plainJsonOutcome(output);
  }

  /** A cost a worker reported for a call it is running: it counts for the caller that joined last. */
  cost(conn: WorkerConnection, message: WorkerCost): void {
    const call = this.pending.get(message.callId);
    const ctx = call?.waiters.findLast((w) => w.ctx)?.ctx;
    if (!call || !ctx || call.org !== conn.org) {
      this.opts.log("debug", "cost for a call that is no longer running was dropped", { ...conn.describe(), callId: message.callId });
      return;
    }
    try {
      ctx.cost(message.usd);
    } catch (err) {
      this.opts.log("error", "recording a worker cost failed", {
        callId: message.callId,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  /** A worker went away: its calls wait the grace period for their answers, then are reported lost. */
  detach(conn: WorkerConnection): void {
    if (conn.inFlight === 0) return;
    conn.inFlight = 0;
    for (const call of this.pending.values()) {
      if (call.worker !== conn || call.done) continue;
      call.worker = undefined;
      this.opts.log("info", "call waits for its lost worker's answer", {
        callId: call.callId,
        tool: call.tool,
        from: conn.id,
        graceMs: this.opts.graceMs,
      });
      call.timer = setTimeout(() => this.finish(call, lost()), this.opts.graceMs);
    }
  }

  private finish(call: PendingCall, outcome: ToolOutcome | undefined): void {
    if (call.done) return;
    call.done = true;
    if (call.timer) clearTimeout(call.timer);
    for (const w of call.waiters) w.unlisten?.();
    if (call.worker) call.worker.inFlight -= 1;
    call.worker = undefined;
    if (this.pending.get(call.callId) === call) this.pending.delete(call.callId);
    // A caller always hears an outcome: no answer is a lost one. A watch hears undefined.
    for (const w of call.waiters) w.resolve(outcome ?? (w.ctx ? lost() : undefined));
  }

  /** Settles every open call (the gateway is closing): nobody here will hear their answers. */
  closeAll(): void {
    for (const call of this.pending.values()) this.finish(call, call.waiters.some((w) => w.ctx) ? lost() : undefined);
  }
}

/**
 * A call message as JSON text: the text JSON.stringify gives for its
 * DaemonCall, written without the envelope objects (calls are most of what the
 * daemon sends; this is about a third cheaper).
 */
function callText(call: PendingCall, args: unknown, ctx: ToolCallContext): string {
  const s = JSON.stringify;
  const trace = ctx.traceparent !== undefined ? `,"traceparent":${s(ctx.traceparent)}` : "";
  return (
    `{"type":"call","callId":${s(call.callId)},"attempt":${s(call.attempt)},"tool":${s(call.tool)},"args":${s(args ?? {})},` +
    `"ctx":{"agent":${s(ctx.agent)},"run":${s(ctx.run)},"idempotencyKey":${s(ctx.idempotencyKey)},` +
    `"timeoutMs":${s(Math.max(0, Math.min(2 ** 31 - 1, ctx.timeoutMs)))}${trace}}}`
  );
}

function lost(): ToolOutcome {
  return { ok: false, kind: "lost", error: LOST_ANSWER };
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max) + "... (truncated)";
}
