import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { WORKER_CLOSE_CODES, WORKER_PATH } from "@wardrik/protocol";
import { CallRunner, type RunningCall } from "./call-runner.js";
import { CallTable } from "@wardrik/protocol";
import type { FinishedCallStore } from "./finished-calls.js";
import type { OutboxLimits } from "./outbox.js";
import { checkTool, type CheckedTool, type ToolDefinition, type ToolInput } from "./tool.js";
import { ConnectionReport, type ReconnectInfo } from "./connection-report.js";
import { WorkerSession, type SessionHost } from "./worker-session.js";

export interface WardrikOptions {
  /**
   * The daemon's HTTP address, such as http://127.0.0.1:7373. Default:
   * WARDRIK_URL. Nodes of a cluster may be listed, separated by commas: the
   * worker connects to the first that answers and, when its node goes away,
   * tries the next one at once.
   */
  url?: string;
  /** A worker token; its org owns the tools. Default: WARDRIK_TOKEN. */
  token?: string;
  /** Shown in the daemon's logs and `wardrik agent show`. Default: host name and pid. */
  name?: string;
  /** Skipped tools, lost connections. Default: console.warn. */
  onWarning?: (message: string) => void;
  /** Connected (with the tools the daemon accepted), reconnected. Default: console.error, so stdout stays the program's own. */
  onInfo?: (message: string) => void;
  /**
   * Told before every wait between connection attempts. The worker itself
   * says only that the link was lost and, while it stays down, every 30 s
   * that it still tries; this sees each attempt.
   */
  onReconnect?: (info: ReconnectInfo) => void;
  /**
   * Delays between reconnection attempts: doubled each time, with jitter.
   * After the daemon says it is going away (a restart), at most
   * `restartDelayMs` (1 s) for a minute, so calls resume soon after it is back.
   */
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number; restartDelayMs?: number };
  /**
   * Results and cost reports of calls that finished while the worker was
   * disconnected are kept and sent on reconnecting, within these bounds
   * (default: 1,000 messages, 15 minutes, 64 Mi characters).
   */
  outbox?: OutboxLimits;
  /**
   * Where the worker remembers the calls it finished, so it can answer for
   * them when a daemon lost the answer (the daemon asks its workers before it
   * asks a person, and a call sent again is answered, not run twice). Default:
   * in memory, within the outbox's bounds. `new FileFinishedCalls(path)` keeps
   * them in a file, so a restarted worker process still answers for them.
   */
  finishedCalls?: FinishedCallStore;
}

/** After a going-away close, the short reconnect delay applies this long. */
const RESTART_WINDOW_MS = 60_000;

/**
 * A worker: register tools with `tool()`, then `listen()` serves the daemon's
 * calls until `close()`, reconnecting whenever the link drops.
 */
export class Wardrik {
  private readonly tools = new Map<string, CheckedTool>();
  private readonly running = new CallTable<RunningCall>();
  private runningSeq = 0;
  private readonly instance = randomUUID();
  private readonly url: string | undefined;
  private readonly token: string | undefined;
  private readonly name: string;
  private readonly warn: (message: string) => void;
  private readonly report: ConnectionReport;
  private readonly onReconnect: ((info: ReconnectInfo) => void) | undefined;
  private readonly initialDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly restartDelayMs: number;
  private readonly runner: CallRunner;
  private readonly finishedCalls: FinishedCallStore | undefined;
  private session: WorkerSession | undefined;
  private listening: Promise<void> | undefined;
  private closing = false;
  private wake: (() => void) | undefined;

  constructor(options: WardrikOptions = {}) {
    this.url = options.url ?? process.env.WARDRIK_URL;
    this.token = options.token ?? process.env.WARDRIK_TOKEN;
    this.name = options.name ?? `${hostname()}-${process.pid}`;
    this.warn = options.onWarning ?? ((message) => console.warn(message));
    const info = options.onInfo ?? ((message) => console.error(message));
    this.report = new ConnectionReport({ info, warn: this.warn });
    this.onReconnect = options.onReconnect;
    this.initialDelayMs = options.reconnect?.initialDelayMs ?? 250;
    this.maxDelayMs = options.reconnect?.maxDelayMs ?? 15_000;
    this.restartDelayMs = options.reconnect?.restartDelayMs ?? 1000;
    this.runner = new CallRunner(
      {
        tools: this.tools,
        warn: (m) => this.warn(m),
        track: (call) => this.track(call),
      },
      options.outbox,
      options.finishedCalls,
    );
    this.finishedCalls = options.finishedCalls;
  }

  /**
   * Registers a tool and returns it, so it can be exported and tested (see
   * `defineTool`). One with an invalid name, or an input that is not a zod
   * object schema, is skipped with a warning; the others still register.
   */
  tool<Input extends ToolInput, Output>(definition: ToolDefinition<Input, Output>): ToolDefinition<Input, Output> {
    const checked = checkTool(definition);
    if (!checked.ok) {
      this.warn(`Wardrik: skipped tool "${checked.name}": ${checked.reason}.`);
      return definition;
    }
    const name = checked.tool.descriptor.name;
    if (this.tools.has(name)) {
      this.warn(`Wardrik: skipped tool "${name}": a tool with this name is already registered on this worker.`);
      return definition;
    }
    this.tools.set(name, checked.tool);
    // Tools added while listening reach the daemon at once.
    this.session?.register();
    return definition;
  }

  /**
   * Connects, registers the tools and serves calls until `close()`. Resolves
   * after close() has drained; rejects only when reconnecting cannot help
   * (no URL or token, a refused token, an incompatible daemon).
   */
  listen(): Promise<void> {
    this.listening ??= this.serve();
    return this.listening;
  }

  /**
   * Stops taking calls, waits for the running ones to finish and sends their
   * results, then disconnects. Closed while disconnected, it aborts the
   * running calls instead (their signal's reason says the worker closed).
   */
  async close(): Promise<void> {
    if (!this.closing) {
      this.closing = true;
      this.wake?.();
      const session = this.session;
      if (session?.ready) {
        await session.drain();
        await this.idle();
        session.close();
      } else {
        // No daemon would hear the answers: stop the calls rather than wait for them.
        this.runner.abortAll();
        session?.close();
      }
    }
    if (this.listening) await this.listening.catch(() => {});
    await this.idle();
    await this.finishedCalls?.close?.();
  }

  private async serve(): Promise<void> {
    if (!this.url) throw new Error("Wardrik needs the daemon's URL: pass { url } or set WARDRIK_URL (such as http://127.0.0.1:7373).");
    if (!this.token) throw new Error("Wardrik needs a worker token: pass { token } or set WARDRIK_TOKEN.");
    const wsUrls = this.url
      .split(",")
      .map((u) => u.trim())
      .filter((u) => u !== "")
      .map(toWorkerUrl);
    if (wsUrls.length === 0) throw new Error(`WARDRIK_URL names no address: "${this.url}".`);
    if (this.tools.size === 0) this.warn("Wardrik: listening with no tools registered.");
    // What earlier processes finished is known before the first call can come.
    await this.finishedCalls?.open?.();
    const runner = this.runner;
    const host: SessionHost = {
      wsUrl: wsUrls[0]!,
      token: this.token,
      name: this.name,
      instance: this.instance,
      tools: this.tools,
      warn: this.warn,
      onReady: (session) => runner.attach(session),
      onRegistered: (url, accepted, first) => this.report.registered(url, this.name, accepted, first),
      onCall: (message) => runner.serve(message),
      onAbort: (message) => runner.abort(message),
      onRecall: (message, session) => runner.recall(message, session),
      onUnsent: (messages) => runner.unsent(messages),
    };
    let failures = 0;
    let restartUntil = 0;
    // Which address to try next; after a failure the next node of the list is tried at
    // once, and the backoff applies only when a whole pass over the list has failed.
    let at = 0;
    let triedThisPass = 0;
    while (!this.closing) {
      const wsUrl = wsUrls[at % wsUrls.length]!;
      const session = new WorkerSession({ ...host, wsUrl });
      this.session = session;
      const end = await session.ended;
      runner.detach(session);
      this.session = undefined;
      if (end.fatal) throw end.fatal;
      if (this.closing) break;
      if (end.welcomed) {
        failures = 0;
        triedThisPass = 0;
      }
      if (end.code === WORKER_CLOSE_CODES.goingAway) restartUntil = Date.now() + RESTART_WINDOW_MS;
      at += 1;
      triedThisPass += 1;
      const next = wsUrls[at % wsUrls.length]!;
      let delay = 0;
      if (wsUrls.length === 1 || triedThisPass >= wsUrls.length) {
        triedThisPass = 0;
        const ceiling = Date.now() < restartUntil ? Math.min(this.restartDelayMs, this.maxDelayMs) : this.maxDelayMs;
        delay = backoff(failures++, this.initialDelayMs, ceiling);
      }
      const retry: ReconnectInfo = { url: next, attempt: failures, delayMs: delay, reason: end.reason, waiting: runner.waiting };
      this.report.ended(wsUrl, end.welcomed, retry);
      this.onReconnect?.(retry);
      if (delay === 0) continue;
      await this.sleep(delay);
    }
    await this.idle();
    if (runner.waiting > 0) {
      this.warn(
        `Wardrik: closed with ${runner.waiting} call message(s) that no daemon received; those calls may be retried or wait for a person.`,
      );
    }
  }

  private track(call: RunningCall): void {
    const id = String(++this.runningSeq);
    this.running.set(id, call);
    void call.done.finally(() => this.running.delete(id));
  }

  /** Waits for every call still running, except those already aborted (the daemon has moved on). */
  private async idle(): Promise<void> {
    for (;;) {
      const waiting = this.running
        .values()
        .filter((c) => !c.aborted())
        .map((c) => c.done);
      if (waiting.length === 0) return;
      await Promise.allSettled(waiting);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}

/** Full jitter over an exponential ceiling, so a fleet of workers does not reconnect in lockstep. */
function backoff(failures: number, initialMs: number, maxMs: number): number {
  const ceiling = Math.min(maxMs, initialMs * 2 ** Math.min(failures, 30));
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}

function toWorkerUrl(base: string): string {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new Error(`WARDRIK_URL is not a URL: "${base}". Use the daemon's address, such as http://127.0.0.1:7373.`);
  }
  if (url.protocol === "http:") url.protocol = "ws:";
  else if (url.protocol === "https:") url.protocol = "wss:";
  else if (url.protocol !== "ws:" && url.protocol !== "wss:") {
    throw new Error(`WARDRIK_URL must be an http(s) address, not "${base}".`);
  }
  if (!url.pathname.endsWith(WORKER_PATH)) url.pathname = url.pathname.replace(/\/+$/, "") + WORKER_PATH;
  return url.toString();
}
