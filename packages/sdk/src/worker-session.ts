import WebSocket from "ws";
import {
  DaemonMessage,
  isCallMessage,
  WORKER_CLOSE_CODES,
  WORKER_PROTOCOL_VERSION,
  type DaemonAbort,
  type DaemonCall,
  type DaemonRecall,
  type WorkerMessage,
} from "@wardrik/protocol";
import type { CallLink, ReplyLink } from "./call-runner.js";
import type { CallFrame } from "./outbox.js";
import type { CheckedTool } from "./tool.js";
import { SDK_VERSION } from "./version.js";

/** What a session needs from the Wardrik that owns it. */
export interface SessionHost {
  readonly wsUrl: string;
  readonly token: string;
  readonly name: string;
  readonly instance: string;
  readonly tools: ReadonlyMap<string, CheckedTool>;
  warn(message: string): void;
  /** The daemon welcomed this session and has been sent the tools. */
  onReady(session: WorkerSession): void;
  /** The daemon's answer to a registration: the tools it routes to this worker (`first`: the first answer of this session). */
  onRegistered(url: string, accepted: string[], first: boolean): void;
  onCall(message: DaemonCall): void;
  onAbort(message: DaemonAbort): void;
  /** The daemon asks whether this worker knows a call; the answer goes back on `session`. */
  onRecall(message: DaemonRecall, session: WorkerSession): void;
  /** Call messages this session took but could not write; the next connection sends them. */
  onUnsent(messages: CallFrame[]): void;
}

export interface SessionEnd {
  /** The daemon said welcome: the backoff starts over. */
  welcomed: boolean;
  /** The WebSocket close code (1006 when the link just died). */
  code: number;
  reason: string;
  /** Reconnecting cannot help (bad token, wrong URL, protocol mismatch); listen() rejects with this. */
  fatal?: Error;
}

/** A frame waiting for the next flush; call messages carry their call so a failed write can hand them back. */
interface Outgoing {
  readonly frame: string;
  readonly call?: CallFrame;
}

/**
 * One WebSocket connection to the daemon: hello, register, then hand calls
 * and aborts to the host until it closes. Calls outlive it (see CallRunner).
 */
export class WorkerSession implements CallLink, ReplyLink {
  readonly ended: Promise<SessionEnd>;
  private readonly socket: WebSocket;
  private queue: Outgoing[] = [];
  private flushScheduled = false;
  private welcomed = false;
  private registeredOnce = false;
  private closed = false;
  private resultLimit = 1024 * 1024;
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
        this.closed = true;
        clearInterval(this.watchdog);
        this.drainAck?.();
        this.returnUnsent(this.queue);
        this.queue = [];
        const text = this.daemonError ?? (reason.toString() || `code ${code}`);
        resolve({ welcomed: this.welcomed, code, reason: text, ...(this.fatal ? { fatal: this.fatal } : {}) });
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
          // The daemon's own message may already say where the token comes from.
          const hint = message.includes("WARDRIK_TOKEN") ? "" : " Check WARDRIK_TOKEN.";
          this.fatal = new Error(`The daemon at ${host.wsUrl} refused the worker token (${status}: ${message || "unauthorized"}).${hint}`);
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

  /** Welcomed and open: call messages sent now should reach the daemon. */
  get ready(): boolean {
    return this.welcomed && !this.closed && this.socket.readyState === WebSocket.OPEN;
  }

  /** Largest result the daemon accepts, from its welcome. */
  get maxResultBytes(): number {
    return this.resultLimit;
  }

  /** Sends the current set of tools; the daemon replaces what it had for this connection. */
  register(): void {
    if (!this.welcomed) return;
    this.send({ type: "register", tools: [...this.host.tools.values()].map((t) => t.descriptor) });
  }

  sendCallFrame(message: CallFrame): void {
    if (!this.ready) return this.host.onUnsent([message]);
    this.enqueue({ frame: message.frame, call: message });
  }

  /** An answer to the daemon's question on this connection; dropped if the connection has closed (the question died with it). */
  reply(frame: string): void {
    if (this.closed || this.socket.readyState !== WebSocket.OPEN) return;
    this.enqueue({ frame });
  }

  /** Asks the daemon for no new calls and waits until it agrees (or the link dies). */
  drain(timeoutMs = 5000): Promise<void> {
    if (!this.ready) return Promise.resolve();
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
      // Calls are most of the traffic: a hand check of their shape spares a schema pass and a copy.
      if (isCallMessage(item)) {
        this.host.onCall(item);
        continue;
      }
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
        this.resultLimit = message.maxResultBytes;
        this.startWatchdog(message.heartbeatMs);
        this.register();
        // Right behind the tools: results that finished while no daemon was connected.
        this.host.onReady(this);
        break;
      case "registered":
        for (const skip of message.skipped) this.host.warn(`Wardrik: the daemon skipped tool "${skip.name}": ${skip.reason}`);
        this.host.onRegistered(this.host.wsUrl, message.accepted, !this.registeredOnce);
        this.registeredOnce = true;
        break;
      case "call":
        this.host.onCall(message);
        break;
      case "abort":
        this.host.onAbort(message);
        break;
      case "recall":
        this.host.onRecall(message, this);
        break;
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

  private send(message: WorkerMessage): void {
    this.enqueue({ frame: JSON.stringify(message) });
  }

  /** Messages queued in one turn of the event loop leave as one frame. */
  private enqueue(out: Outgoing): void {
    if (this.closed || (this.socket.readyState !== WebSocket.OPEN && this.socket.readyState !== WebSocket.CONNECTING)) {
      return this.returnUnsent([out]);
    }
    this.queue.push(out);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.flush);
    }
  }

  private readonly flush = (): void => {
    this.flushScheduled = false;
    if (this.queue.length === 0 || this.socket.readyState !== WebSocket.OPEN) return;
    const batch = this.queue;
    this.queue = [];
    const text = batch.length === 1 ? batch[0]!.frame : "[" + batch.map((o) => o.frame).join(",") + "]";
    // The callback reports a write that never reached the socket: its call messages wait for the next connection.
    this.socket.send(text, (err) => {
      if (err) this.returnUnsent(batch);
    });
  };

  private returnUnsent(outgoing: Outgoing[]): void {
    const calls = outgoing.flatMap((o) => (o.call ? [o.call] : []));
    if (calls.length > 0) this.host.onUnsent(calls);
  }
}

function errorBodyMessage(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { detail?: unknown };
    return typeof parsed.detail === "string" ? parsed.detail : undefined;
  } catch {
    return body.trim().slice(0, 200) || undefined;
  }
}
