import type { AbortReason, DaemonAbort, DaemonCall, DaemonRecall } from "@wardrik/protocol";
import { CallTable } from "@wardrik/protocol";
import { MemoryFinishedCalls, type FinishedCallRecord, type FinishedCallStore } from "./finished-calls.js";
import { Outbox, type CallFrame, type OutboxLimits } from "./outbox.js";
import { parseArgs, serializeResult, thrownMessage, type CheckedTool, type ParsedArgs, type ToolContext } from "./tool.js";
import { runInTraceContext } from "./trace-context.js";

/** Where a finished call's messages go: the connection the daemon has welcomed, if any. */
export interface CallLink {
  /** Welcomed and open: a message sent now should arrive. */
  readonly ready: boolean;
  readonly maxResultBytes: number;
  sendCallFrame(message: CallFrame): void;
}

/** Where the answer to a daemon's question goes: the connection that asked; dropped if it has closed. */
export interface ReplyLink {
  reply(frame: string): void;
}

export interface RunnerHost {
  readonly tools: ReadonlyMap<string, CheckedTool>;
  warn(message: string): void;
  /** Keeps a running call visible to close(), which waits for it. */
  track(call: RunningCall): void;
}

export interface RunningCall {
  /** The daemon stopped it: nobody waits for its answer. */
  aborted(): boolean;
  readonly done: Promise<void>;
}

interface Served {
  readonly call: DaemonCall;
  /** Made when `run` first reads ctx.signal: most calls never do, and AbortControllers are costly. */
  controller: AbortController | undefined;
  abortReason: Error | undefined;
  finished: boolean;
  /** The same call sent again while its result was being remembered: answered once it is (made when one is). */
  resent: DaemonCall[] | undefined;
  /** `{"type":"result","callId":...,"attempt":N,`: the start of each message about its result, made once. */
  readonly head: string;
}

/**
 * Runs the daemon's calls for one worker, across connections. A call goes on
 * when the connection drops (only the daemon's abort, or its deadline, stops
 * it); a message it produces while no connection is ready waits in the outbox
 * and goes, with the same callId and attempt, right after the next welcome.
 */
export class CallRunner {
  private readonly served = new CallTable<Served>();
  /** The same calls by idempotency key, for a daemon's `recall` (a CallTable too: an entry comes and goes with each call). */
  private readonly servedByKey = new CallTable<Served>();
  private readonly outbox: Outbox;
  private readonly finished: FinishedCallStore;
  private link: CallLink | undefined;
  private maxResultBytes = 1024 * 1024;

  constructor(
    private readonly host: RunnerHost,
    limits: OutboxLimits = {},
    finished?: FinishedCallStore,
  ) {
    this.outbox = new Outbox(limits, (m) => host.warn(m));
    this.finished =
      finished ?? new MemoryFinishedCalls({ maxCalls: limits.maxMessages, maxAgeMs: limits.maxAgeMs, maxChars: limits.maxChars });
  }

  /** Messages waiting for a connection. */
  get waiting(): number {
    return this.outbox.size;
  }

  /** A daemon welcomed `link` and has its tools: what waited goes first. */
  attach(link: CallLink): void {
    this.link = link;
    this.maxResultBytes = link.maxResultBytes;
    for (const message of this.outbox.take()) link.sendCallFrame(message);
  }

  detach(link: CallLink): void {
    if (this.link === link) this.link = undefined;
  }

  /** Messages a connection could not write before it closed. */
  unsent(messages: readonly CallFrame[]): void {
    this.outbox.restore(messages);
  }

  abort(message: DaemonAbort): void {
    const call = this.served.get(message.callId);
    if (call && !call.finished) abortServed(call, abortReason(message.reason));
  }

  /** The worker is closing with no daemon to answer: every running call is aborted. */
  abortAll(): void {
    for (const entry of this.served.values()) {
      if (entry.finished) continue;
      const err = new Error("The worker closed before the call finished.");
      err.name = "AbortError";
      abortServed(entry, err);
    }
  }

  serve(message: DaemonCall): void {
    const previous = this.served.get(message.callId);
    if (previous?.finished) {
      // Sent again while its result is being remembered: answered with that result once it is.
      (previous.resent ??= []).push(message);
      return;
    }
    if (previous) {
      abortServed(previous, abortReason("cancelled"));
      return this.run(message);
    }
    // Sent again after it finished here: the daemon lost the answer, not the effect. Answer, do not repeat it.
    const found = this.finished.get(message.ctx.idempotencyKey);
    if (isPromiseLike(found)) {
      found.then(
        (record) => this.answerOrRun(message, record),
        (err: unknown) => {
          this.host.warn(`Wardrik: the finished-calls store could not be read (${thrownMessage(err)}); ${message.tool} runs.`);
          this.run(message);
        },
      );
    } else this.answerOrRun(message, found);
  }

  /**
   * A daemon asks whether this worker knows a call's idempotency key (its
   * answer was lost). The answer goes to the connection that asked, now.
   */
  recall(message: DaemonRecall, link: ReplyLink): void {
    const head = `{"type":"recalled","ask":${JSON.stringify(message.ask)},"callId":${JSON.stringify(message.callId)},`;
    const running = this.servedByKey.get(message.idempotencyKey);
    if (running && !running.abortReason) return link.reply(`${head}"state":"running","attempt":${running.call.attempt}}`);
    const answer = (record: FinishedCallRecord | undefined): void =>
      link.reply(record ? `${head}"state":"finished","attempt":${record.attempt},${record.result.slice(1)}` : `${head}"state":"unknown"}`);
    const found = this.finished.get(message.idempotencyKey);
    if (!isPromiseLike(found)) return answer(found);
    found.then(answer, (err: unknown) => {
      // Unknown would let a person approve a second run; say nothing, as an older worker would.
      this.host.warn(
        `Wardrik: could not answer whether call ${message.callId} ran: the finished-calls store failed (${thrownMessage(err)}).`,
      );
    });
  }

  private answerOrRun(message: DaemonCall, record: FinishedCallRecord | undefined): void {
    if (!record || record.callId !== message.callId) return this.run(message);
    this.host.warn(
      `Wardrik: ${message.tool} call ${message.callId} came again (attempt ${message.attempt}) after it finished here; answered with its result instead of running it twice.`,
    );
    this.emit({ callId: message.callId, frame: resultHead(message) + record.result.slice(1) });
  }

  private run(message: DaemonCall): void {
    const entry: Served = {
      call: message,
      controller: undefined,
      abortReason: undefined,
      finished: false,
      resent: undefined,
      head: resultHead(message),
    };
    this.served.set(message.callId, entry);
    this.servedByKey.set(message.ctx.idempotencyKey, entry);
    const outcome = this.execute(entry);
    if (typeof outcome === "string") {
      const remembered = this.complete(entry, outcome);
      if (remembered) this.host.track({ aborted: () => entry.abortReason !== undefined, done: remembered });
      return;
    }
    // The deadline holds even when the daemon cannot send its abort (link down at the time).
    const timer = setTimeout(() => abortServed(entry, abortReason("timeout")), message.ctx.timeoutMs);
    const done = outcome.then(
      (body) => {
        clearTimeout(timer);
        return this.complete(entry, body);
      },
      (err: unknown) => {
        clearTimeout(timer);
        return this.complete(entry, failureBody(`Wardrik SDK error while serving ${message.tool}: ${thrownMessage(err)}`));
      },
    );
    this.host.track({ aborted: () => entry.abortReason !== undefined, done });
  }

  private emit(message: CallFrame): void {
    const link = this.link;
    if (link?.ready) link.sendCallFrame(message);
    else this.outbox.hold(message);
  }

  /**
   * The call ended with `body` (its result message after the head): its
   * result is remembered, then sent. Returns a promise while the store is
   * still writing (the result goes once it has).
   */
  private complete(entry: Served, body: string): Promise<void> | undefined {
    entry.finished = true;
    const call = entry.call;
    // A stopped call's answer is no longer wanted: the daemon has already told the model.
    if (entry.abortReason) return this.forget(entry);
    const record: FinishedCallRecord = {
      key: call.ctx.idempotencyKey,
      callId: call.callId,
      attempt: call.attempt,
      at: Date.now(),
      result: "{" + body,
    };
    const send = (): void => {
      this.forget(entry);
      this.emit({ callId: call.callId, frame: entry.head + body });
      if (entry.resent) for (const again of entry.resent) this.emit({ callId: again.callId, frame: resultHead(again) + body });
    };
    let stored: void | Promise<void>;
    try {
      stored = this.finished.put(record);
    } catch (err) {
      stored = Promise.reject(err);
    }
    if (!isPromiseLike(stored)) {
      send();
      return undefined;
    }
    return Promise.resolve(stored).then(send, (err: unknown) => {
      this.host.warn(
        `Wardrik: could not remember ${call.tool} call ${call.callId} as finished (${thrownMessage(err)}); its result is sent anyway.`,
      );
      send();
    });
  }

  private forget(entry: Served): undefined {
    if (this.served.get(entry.call.callId) === entry) this.served.delete(entry.call.callId);
    if (this.servedByKey.get(entry.call.ctx.idempotencyKey) === entry) this.servedByKey.delete(entry.call.ctx.idempotencyKey);
    return undefined;
  }

  /** Runs one call to its result's body (see resultBody); synchronously when neither the schema nor `run` is async. */
  private execute(entry: Served): string | Promise<string> {
    const message = entry.call;
    const tool = this.host.tools.get(message.tool);
    if (!tool) return failureBody(`This worker does not serve a tool named ${message.tool}.`);
    const args = parseArgs(message.tool, tool.input, message.args ?? {});
    return args instanceof Promise ? args.then((a) => this.runTool(entry, tool, a)) : this.runTool(entry, tool, args);
  }

  private runTool(entry: Served, tool: CheckedTool, args: ParsedArgs): string | Promise<string> {
    const message = entry.call;
    if (!args.ok) return failureBody(args.error);
    let value: unknown;
    try {
      const ctx = this.context(entry);
      const traceparent = message.ctx.traceparent;
      // Without trace context (most calls) no closure is made for it.
      value = traceparent === undefined ? tool.run(args.value, ctx) : runInTraceContext(traceparent, () => tool.run(args.value, ctx));
    } catch (err) {
      return failureBody(thrownMessage(err));
    }
    if (!isPromiseLike(value)) return this.resultBody(value);
    return Promise.resolve(value).then(
      (v) => this.resultBody(v),
      (err: unknown) => failureBody(thrownMessage(err)),
    );
  }

  private context(entry: Served): ToolContext {
    const message = entry.call;
    return new CallContext(entry, (usd: number) => {
      if (typeof usd !== "number" || !Number.isFinite(usd) || usd < 0) {
        throw new TypeError(`cost(usd) takes a non-negative number of US dollars; got ${String(usd)}.`);
      }
      if (entry.finished) {
        this.host.warn(`Wardrik: cost(${usd}) was called after ${message.tool} returned; it was not counted.`);
        return;
      }
      this.emit({ callId: message.callId, frame: JSON.stringify({ type: "cost", callId: message.callId, usd }) });
    });
  }

  /** `"ok":true,"output":...}`: a result message after its head, which the finished-calls store keeps too. */
  private resultBody(value: unknown): string {
    const serialized = serializeResult(value);
    if (!serialized.ok) return failureBody(serialized.error);
    // Characters undercount bytes by at most 3x; measure bytes only when it could matter.
    if (serialized.json.length * 3 > this.maxResultBytes) {
      const bytes = Buffer.byteLength(serialized.json);
      if (bytes > this.maxResultBytes) {
        return failureBody(`The tool's result is ${bytes} bytes; the limit is ${this.maxResultBytes}. Return only what the model needs.`);
      }
    }
    return `"ok":true,"output":${serialized.json}}`;
  }
}

/**
 * The context a running call's tool gets. `signal` is an own enumerable
 * property, as in an object literal (a spread copy has it), made only when
 * read, through one getter shared by every call: a getter written in a
 * literal is a new function each call, and V8 then gives each context a
 * hidden class of its own (several hundred bytes a call for the collector).
 */
class CallContext implements ToolContext {
  readonly agent: string;
  readonly run: string;
  readonly idempotencyKey: string;
  readonly traceparent: string | undefined;
  declare readonly signal: AbortSignal;
  readonly cost: (usd: number) => void;
  readonly #entry: Served;

  constructor(entry: Served, cost: (usd: number) => void) {
    const ctx = entry.call.ctx;
    this.agent = ctx.agent;
    this.run = ctx.run;
    this.idempotencyKey = ctx.idempotencyKey;
    this.traceparent = ctx.traceparent;
    Object.defineProperty(this, "signal", SIGNAL_OF_CALL);
    this.cost = cost;
    this.#entry = entry;
  }

  static signalOf(ctx: CallContext): AbortSignal {
    const entry = ctx.#entry;
    if (!entry.controller) {
      entry.controller = new AbortController();
      if (entry.abortReason) entry.controller.abort(entry.abortReason);
    }
    return entry.controller.signal;
  }
}

const SIGNAL_OF_CALL: PropertyDescriptor = {
  get(this: CallContext): AbortSignal {
    return CallContext.signalOf(this);
  },
  enumerable: true,
  configurable: true,
};

// Result frames are built as text so the output is serialised once.
function resultHead(message: DaemonCall): string {
  return `{"type":"result","callId":${JSON.stringify(message.callId)},"attempt":${message.attempt},`;
}

function failureBody(error: string): string {
  return `"ok":false,"error":${JSON.stringify(error)}}`;
}

function abortServed(entry: Served, reason: Error): void {
  if (entry.abortReason) return;
  entry.abortReason = reason;
  entry.controller?.abort(reason);
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}

function abortReason(reason: AbortReason): Error {
  const text = { killed: "The call was killed.", cancelled: "The call's turn was cancelled.", timeout: "The call timed out." }[reason];
  const err = new Error(text);
  err.name = reason === "timeout" ? "TimeoutError" : "AbortError";
  return err;
}
