import type { WorkerCost, WorkerResult } from "@wardrik/protocol";
import type { Logger } from "../../log/logger.js";
import { LOST_ANSWER } from "@wardrik/protocol";
import { stopReasonOf, type LateAnswer, type ToolCallContext, type ToolOutcome } from "../toolset.js";
import { CallTable } from "@wardrik/protocol";
import type { WorkerConnection } from "./worker-connection.js";

/** A call sent to a worker (or awaited from one) and not answered yet. */
interface PendingCall {
  readonly org: string;
  readonly callId: string;
  readonly tool: string;
  readonly ctx: ToolCallContext | undefined;
  attempt: number;
  /** The worker running it; undefined once that worker is gone (or for a call adopted after a restart). */
  worker: WorkerConnection | undefined;
  done: boolean;
  timer: NodeJS.Timeout | undefined;
  onAbort: (() => void) | undefined;
  resolve: (outcome: ToolOutcome | undefined) => void;
}

export interface WorkerCallsOptions {
  /** How long a call whose worker is gone waits for that worker (or another connection) to deliver its answer. */
  graceMs: number;
  /** Largest serialised result; a bigger one fails the call. */
  maxResultBytes: number;
  log: Logger;
  /** An answer for a call nobody here waits for (a worker that kept it through a restart). */
  onLateAnswer?: ((org: string, answer: LateAnswer) => void) | undefined;
}

/**
 * The calls in flight to workers. The gateway only carries calls: the
 * runtime decides what is retried and when a call has timed out. When a
 * worker goes away mid-call, the call waits a grace period for its answer,
 * which a reconnecting worker delivers (from any connection of the same
 * org); after that it is reported lost and the runtime applies its rule.
 */
export class WorkerCalls {
  private readonly pending = new CallTable<PendingCall>();

  constructor(private readonly opts: WorkerCallsOptions) {}

  /** Sends a call to `worker` and resolves with its outcome. */
  start(tool: string, args: unknown, ctx: ToolCallContext, worker: WorkerConnection): Promise<ToolOutcome> {
    const existing = this.pending.get(ctx.callId);
    if (existing && !existing.done) return Promise.resolve({ ok: false, kind: "failed", error: `Call ${ctx.callId} is already running.` });
    return new Promise<ToolOutcome | undefined>((resolve) => {
      const call: PendingCall = {
        org: ctx.org,
        callId: ctx.callId,
        tool,
        ctx,
        attempt: ctx.attempt,
        worker: undefined,
        done: false,
        timer: undefined,
        onAbort: undefined,
        resolve,
      };
      call.onAbort = () => this.stop(call);
      this.pending.set(ctx.callId, call);
      ctx.signal.addEventListener("abort", call.onAbort, { once: true });
      this.dispatch(call, args, worker);
    }).then((o) => o ?? { ok: false, kind: "lost", error: LOST_ANSWER });
  }

  private dispatch(call: PendingCall, args: unknown, worker: WorkerConnection): void {
    const ctx = call.ctx!;
    call.worker = worker;
    worker.inFlight += 1;
    worker.send({
      type: "call",
      callId: call.callId,
      attempt: call.attempt,
      tool: call.tool,
      args: args ?? {},
      ctx: {
        agent: ctx.agent,
        run: ctx.run,
        idempotencyKey: ctx.idempotencyKey,
        timeoutMs: Math.max(0, Math.min(2 ** 31 - 1, ctx.timeoutMs)),
        ...(ctx.traceparent !== undefined ? { traceparent: ctx.traceparent } : {}),
      },
    });
  }

  /** The call's signal aborted: tell its worker why (unless the daemon is only stopping), and settle it. */
  private stop(call: PendingCall): void {
    const why = stopReasonOf(call.ctx!.signal);
    // On shutdown the worker keeps the call running and hands its answer to the next daemon.
    if (why !== "shutdown") call.worker?.send({ type: "abort", callId: call.callId, reason: why });
    const full = `workers/${call.tool}`;
    const error =
      why === "killed"
        ? `${full} was killed before it finished.`
        : why === "timeout"
          ? `${full} timed out.`
          : `${full} was stopped because its turn ended before it finished.`;
    this.finish(call, { ok: false, kind: why === "timeout" ? "timeout" : "killed", error });
  }

  /**
   * Waits up to `timeoutMs` for the answer of a call a previous process sent
   * (a worker that kept running it through a restart). Undefined if none came.
   */
  adopt(org: string, callId: string, timeoutMs: number): Promise<ToolOutcome | undefined> {
    if (this.pending.get(callId)) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const call: PendingCall = {
        org,
        callId,
        tool: "",
        ctx: undefined,
        attempt: 0,
        worker: undefined,
        done: false,
        timer: undefined,
        onAbort: undefined,
        resolve,
      };
      call.timer = setTimeout(() => this.finish(call, undefined), Math.max(0, timeoutMs));
      this.pending.set(callId, call);
    });
  }

  /** A worker's answer: for the call it belongs to (any attempt, from any connection of its org), or a late one. */
  result(conn: WorkerConnection, message: WorkerResult, checkSize: boolean): void {
    const outcome = this.toOutcome(message, checkSize);
    const call = this.pending.get(message.callId);
    // An earlier attempt's answer does not settle a later one: that attempt may be on its way to another worker
    // process, which would then run the call after its result was stored. The runtime decides what it is worth.
    if (!call || call.done || (call.ctx && message.attempt < call.attempt)) {
      const late = { callId: message.callId, attempt: message.attempt, outcome };
      if (this.opts.onLateAnswer) this.opts.onLateAnswer(conn.org, late);
      else this.opts.log("debug", "late result dropped", { ...conn.describe(), callId: message.callId, attempt: message.attempt });
      return;
    }
    if (call.org !== conn.org) {
      this.opts.log("warn", "a worker answered a call of another org; dropped", { ...conn.describe(), callId: message.callId });
      return;
    }
    this.finish(call, outcome);
  }

  private toOutcome(message: WorkerResult, checkSize: boolean): ToolOutcome {
    if (!message.ok) return { ok: false, kind: "failed", error: truncate(message.error, this.opts.maxResultBytes) };
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
    return { ok: true, output };
  }

  /** A cost a worker reported for a call it is running. */
  cost(conn: WorkerConnection, message: WorkerCost): void {
    const call = this.pending.get(message.callId);
    if (!call?.ctx || call.org !== conn.org) {
      this.opts.log("debug", "cost for a call that is no longer running was dropped", { ...conn.describe(), callId: message.callId });
      return;
    }
    try {
      call.ctx.cost(message.usd);
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
      call.timer = setTimeout(() => this.finish(call, { ok: false, kind: "lost", error: LOST_ANSWER }), this.opts.graceMs);
    }
  }

  private finish(call: PendingCall, outcome: ToolOutcome | undefined): void {
    if (call.done) return;
    call.done = true;
    if (call.timer) clearTimeout(call.timer);
    if (call.onAbort) call.ctx?.signal.removeEventListener("abort", call.onAbort);
    if (call.worker) call.worker.inFlight -= 1;
    call.worker = undefined;
    if (this.pending.get(call.callId) === call) this.pending.delete(call.callId);
    call.resolve(outcome);
  }

  /** Settles every open call (the gateway is closing): nobody here will hear their answers. */
  closeAll(): void {
    for (const call of this.pending.values()) this.finish(call, call.ctx ? { ok: false, kind: "lost", error: LOST_ANSWER } : undefined);
  }
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max) + "... (truncated)";
}
