import WebSocket from "ws";
import { DaemonMessage, WORKER_CLOSE_CODES, WORKER_PROTOCOL_VERSION, type DaemonCall, type WorkerMessage } from "@wardrik/protocol";
import { CallTable } from "./call-table.js";
import { parseArgs, serializeResult, thrownMessage, type CheckedTool, type ParsedArgs, type ToolContext } from "./tool.js";

export const SDK_VERSION = "0.1.0";

/** What a session needs from the Wardrik that owns it. */
export interface SessionHost {
  readonly wsUrl: string;
  readonly token: string;
  readonly name: string;
  readonly instance: string;
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

export interface SessionEnd {
  /** The daemon said welcome: the backoff starts over. */
  welcomed: boolean;
  reason: string;
  /** Reconnecting cannot help (bad token, wrong URL, protocol mismatch); listen() rejects with this. */
  fatal?: Error;
}

interface Served {
  readonly call: DaemonCall;
  /** Made when `run` first reads ctx.signal: most calls never do, and AbortControllers are costly. */
  controller: AbortController | undefined;
  abortReason: Error | undefined;
  finished: boolean;
}

/** One WebSocket connection to the daemon: hello, register, serve calls until it closes. */
export class WorkerSession {
  readonly ended: Promise<SessionEnd>;
  private readonly socket: WebSocket;
  private readonly served = new CallTable<Served>();
  private queue: string[] = [];
  private flushScheduled = false;
  private welcomed = false;
  private maxResultBytes = 1024 * 1024;
  private lastHeard = Date.now();
  private watchdog: NodeJS.Timeout | undefined;
  private fatal: Error | undefined;
  private daemonError: string | undefined;
  private drainAck: (() => void) | undefined;

  constructor(private readonly host: SessionHost) {
    this.socket = new WebSocket(host.wsUrl, {
      headers: { authorization: `Bearer ${host.token}` },
      perMessageDeflate: false,
      handshakeTimeout: 10_000,
    });
    this.ended = new Promise((resolve) => {
      this.socket.on("close", (code, reason) => {
        clearInterval(this.watchdog);
        this.drainAck?.();
        const text = this.daemonError ?? (reason.toString() || `code ${code}`);
        resolve({ welcomed: this.welcomed, reason: text, ...(this.fatal ? { fatal: this.fatal } : {}) });
      });
    });
    this.socket.on("open", () => {
      this.send({ type: "hello", protocol: WORKER_PROTOCOL_VERSION, name: host.name, instance: host.instance, sdk: SDK_VERSION });
    });
    this.socket.on("unexpected-response", (_req, res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => {
        const status = res.statusCode ?? 0;
        const message = errorBodyMessage(body) ?? res.statusMessage ?? "";
        if (status === 401 || status === 403) {
          this.fatal = new Error(`The daemon refused the worker token (${status}: ${message}). Check WARDRIK_TOKEN.`);
        } else if (status === 404) {
          this.fatal = new Error(
            `${host.wsUrl} is not a Wardrik worker endpoint (404). Set WARDRIK_URL to the daemon's address, such as http://127.0.0.1:7373.`,
          );
        }
        this.daemonError = `the daemon answered ${status}${message ? `: ${message}` : ""}`;
        this.socket.terminate();
      });
    });
    this.socket.on("error", (err) => {
      // 'close' follows; keep the cause for the reconnect warning.
      this.daemonError ??= err.message;
    });
    this.socket.on("message", (data, isBinary) => this.onFrame(data.toString(), isBinary));
  }

  /** Sends the current set of tools; the daemon replaces what it had for this connection. */
  register(): void {
    if (!this.welcomed) return;
    this.send({ type: "register", tools: [...this.host.tools.values()].map((t) => t.descriptor) });
  }

  /** Asks the daemon for no new calls and waits until it agrees (or the link dies). */
  drain(timeoutMs = 5000): Promise<void> {
    if (!this.welcomed || this.socket.readyState !== WebSocket.OPEN) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.drainAck?.(), timeoutMs);
      this.drainAck = () => {
        clearTimeout(timer);
        this.drainAck = undefined;
        resolve();
      };
      this.send({ type: "drain" });
    });
  }

  close(): void {
    this.flush();
    if (this.socket.readyState === WebSocket.CONNECTING) this.socket.terminate();
    else this.socket.close(WORKER_CLOSE_CODES.normal, "worker closed");
  }

  private onFrame(text: string, isBinary: boolean): void {
    this.lastHeard = Date.now();
    if (isBinary) return this.host.warn("Wardrik: ignored a binary message from the daemon.");
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return this.host.warn("Wardrik: ignored a message from the daemon that is not JSON.");
    }
    for (const item of Array.isArray(parsed) ? parsed : [parsed]) {
      const result = DaemonMessage.safeParse(item);
      if (!result.success) {
        // A newer daemon may send messages this SDK does not know; they are not worth a disconnect.
        this.host.warn(`Wardrik: ignored a message from the daemon this SDK does not understand: ${text.slice(0, 200)}`);
        continue;
      }
      this.onMessage(result.data);
    }
  }

  private onMessage(message: DaemonMessage): void {
    switch (message.type) {
      case "welcome":
        this.welcomed = true;
        this.maxResultBytes = message.maxResultBytes;
        this.startWatchdog(message.heartbeatMs);
        this.register();
        break;
      case "registered":
        for (const skip of message.skipped) this.host.warn(`Wardrik: the daemon skipped tool "${skip.name}": ${skip.reason}`);
        break;
      case "call":
        this.serve(message);
        break;
      case "abort": {
        const call = this.served.get(message.callId);
        if (call && !call.finished) abortServed(call, abortReason(message.reason));
        break;
      }
      case "ping":
        this.send(message.ts === undefined ? { type: "pong" } : { type: "pong", ts: message.ts });
        break;
      case "draining":
        this.drainAck?.();
        break;
      case "error":
        this.daemonError = `${message.code}: ${message.message}`;
        this.host.warn(`Wardrik: the daemon reported an error: ${message.message}`);
        if (message.code === "unsupported_protocol" || message.code === "unauthorized") this.fatal = new Error(message.message);
        break;
    }
  }

  /** A daemon that stays silent for three heartbeats is gone even if TCP has not noticed. */
  private startWatchdog(heartbeatMs: number): void {
    clearInterval(this.watchdog);
    this.watchdog = setInterval(() => {
      if (Date.now() - this.lastHeard > 3 * heartbeatMs) {
        this.daemonError = `no message from the daemon for ${Math.round((Date.now() - this.lastHeard) / 1000)} s`;
        this.socket.terminate();
      }
    }, heartbeatMs);
    this.watchdog.unref();
  }

  private serve(message: DaemonCall): void {
    const previous = this.served.get(message.callId);
    if (previous && !previous.finished) abortServed(previous, abortReason("cancelled"));
    const entry: Served = { call: message, controller: undefined, abortReason: undefined, finished: false };
    this.served.set(message.callId, entry);
    const outcome = this.execute(entry);
    if (typeof outcome === "string") return this.complete(entry, outcome);
    // Covers a daemon that cannot send its abort any more (link down at the deadline).
    const timer = setTimeout(() => abortServed(entry, abortReason("timeout")), message.ctx.timeoutMs);
    const done = outcome.then(
      (frame) => {
        clearTimeout(timer);
        this.complete(entry, frame);
      },
      (err: unknown) => {
        clearTimeout(timer);
        this.complete(entry, failureFrame(message, `Wardrik SDK error while serving ${message.tool}: ${thrownMessage(err)}`));
      },
    );
    this.host.track({ aborted: () => entry.abortReason !== undefined, done });
  }

  private complete(entry: Served, frame: string): void {
    entry.finished = true;
    if (this.served.get(entry.call.callId) === entry) this.served.delete(entry.call.callId);
    // A stopped call's answer is no longer wanted: the daemon has already told the model.
    if (!entry.abortReason) this.sendRaw(frame);
  }

  /** Runs one call to its result frame; synchronously when neither the schema nor `run` is async. */
  private execute(entry: Served): string | Promise<string> {
    const message = entry.call;
    const tool = this.host.tools.get(message.tool);
    if (!tool) return failureFrame(message, `This worker does not serve a tool named ${message.tool}.`);
    const args = parseArgs(message.tool, tool.input, message.args ?? {});
    return args instanceof Promise ? args.then((a) => this.runTool(entry, tool, a)) : this.runTool(entry, tool, args);
  }

  private runTool(entry: Served, tool: CheckedTool, args: ParsedArgs): string | Promise<string> {
    const message = entry.call;
    if (!args.ok) return failureFrame(message, args.error);
    let value: unknown;
    try {
      value = tool.run(args.value, this.context(entry));
    } catch (err) {
      return failureFrame(message, thrownMessage(err));
    }
    if (!isPromiseLike(value)) return this.resultFrame(message, value);
    return Promise.resolve(value).then(
      (v) => this.resultFrame(message, v),
      (err: unknown) => failureFrame(message, thrownMessage(err)),
    );
  }

  private context(entry: Served): ToolContext {
    const message = entry.call;
    return {
      agent: message.ctx.agent,
      run: message.ctx.run,
      idempotencyKey: message.ctx.idempotencyKey,
      get signal() {
        if (!entry.controller) {
          entry.controller = new AbortController();
          if (entry.abortReason) entry.controller.abort(entry.abortReason);
        }
        return entry.controller.signal;
      },
      cost: (usd: number) => {
        if (typeof usd !== "number" || !Number.isFinite(usd) || usd < 0) {
          throw new TypeError(`cost(usd) takes a non-negative number of US dollars; got ${String(usd)}.`);
        }
        if (entry.finished) {
          this.host.warn(`Wardrik: cost(${usd}) was called after ${message.tool} returned; it was not counted.`);
          return;
        }
        this.send({ type: "cost", callId: message.callId, usd });
      },
    };
  }

  private resultFrame(message: DaemonCall, value: unknown): string {
    const serialized = serializeResult(value);
    if (!serialized.ok) return failureFrame(message, serialized.error);
    // Characters undercount bytes by at most 3x; measure bytes only when it could matter.
    if (serialized.json.length * 3 > this.maxResultBytes) {
      const bytes = Buffer.byteLength(serialized.json);
      if (bytes > this.maxResultBytes) {
        return failureFrame(
          message,
          `The tool's result is ${bytes} bytes; the limit is ${this.maxResultBytes}. Return only what the model needs.`,
        );
      }
    }
    return `${resultHead(message)}"ok":true,"output":${serialized.json}}`;
  }

  private send(message: WorkerMessage): void {
    this.sendRaw(JSON.stringify(message));
  }

  /** Messages queued in one turn of the event loop leave as one frame. */
  private sendRaw(frame: string): void {
    if (this.socket.readyState !== WebSocket.OPEN && this.socket.readyState !== WebSocket.CONNECTING) return;
    this.queue.push(frame);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.flush);
    }
  }

  private readonly flush = (): void => {
    this.flushScheduled = false;
    if (this.queue.length === 0 || this.socket.readyState !== WebSocket.OPEN) return;
    const queue = this.queue;
    this.queue = [];
    this.socket.send(queue.length === 1 ? queue[0]! : "[" + queue.join(",") + "]");
  };
}

// Result frames are built as text so the output is serialised once.
function resultHead(message: DaemonCall): string {
  return `{"type":"result","callId":${JSON.stringify(message.callId)},"attempt":${message.attempt},`;
}

function failureFrame(message: DaemonCall, error: string): string {
  return `${resultHead(message)}"ok":false,"error":${JSON.stringify(error)}}`;
}

function abortServed(entry: Served, reason: Error): void {
  if (entry.abortReason) return;
  entry.abortReason = reason;
  entry.controller?.abort(reason);
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}

function abortReason(reason: "killed" | "cancelled" | "timeout"): Error {
  const text = { killed: "The call was killed.", cancelled: "The call's turn was cancelled.", timeout: "The call timed out." }[reason];
  const err = new Error(text);
  err.name = reason === "timeout" ? "TimeoutError" : "AbortError";
  return err;
}

function errorBodyMessage(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } };
    return typeof parsed.error?.message === "string" ? parsed.error.message : undefined;
  } catch {
    return body.trim().slice(0, 200) || undefined;
  }
}
