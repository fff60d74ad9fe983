import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type RawData, type WebSocket } from "ws";
import {
  NAME_PATTERN,
  WORKER_CLOSE_CODES,
  WORKER_PATH,
  WORKER_PROTOCOL_VERSION,
  WorkerMessage,
  type WorkerHello,
  type WorkerRegister,
  type WorkerResult,
} from "@wardrik/protocol";
import { ulidIds, type IdGenerator } from "../../ids.js";
import type { LogLevel, Logger } from "../../log/logger.js";
import type { ToolCallContext, ToolInfo, ToolOutcome, ToolScope, Toolset } from "../toolset.js";
import { CallTable, LOST_MESSAGE, formatSeconds, type PendingCall } from "./pending-call.js";
import { WorkerConnection } from "./worker-connection.js";

export type WorkerGatewayLogLevel = LogLevel;

export interface WorkerGatewayOptions {
  /** Maps a worker token to its org; undefined refuses the connection. */
  authenticate(token: string): Promise<{ org: string } | undefined>;
  log?: Logger;
  /** How often each worker is pinged. Default 10 s. */
  heartbeatIntervalMs?: number;
  /** A worker silent for this long is dropped. Default 30 s. */
  heartbeatTimeoutMs?: number;
  /** Largest WebSocket message accepted; a bigger one closes the connection. Default 16 MiB. */
  maxMessageBytes?: number;
  /** Largest serialised result; a bigger one fails the call. Default 1 MiB. */
  maxResultBytes?: number;
  /** Attempts of a retryable call before the gateway gives up on workers that keep dying. Default 5. */
  maxAttempts?: number;
  ids?: IdGenerator;
}

/** The workers of one org that serve one tool, plus calls and waiters that want one. */
interface ToolRoute {
  workers: WorkerConnection[];
  next: number;
  waitingCalls: Set<PendingCall>;
  waiters: Set<() => void>;
}

const NAMESPACE = "workers";
const NAME_RULE = "a tool name is 1 to 55 letters, digits, _ or -";

/**
 * The `workers` toolset: worker processes (the SDK) connect over WebSocket at
 * `/v1/workers`, register tools, and run the calls the runtime sends through
 * `call()`. Tools belong to the org of the worker's token.
 */
export class WorkerGateway implements Toolset {
  readonly namespace = NAMESPACE;
  private readonly wss: WebSocketServer;
  private readonly connections = new Set<WorkerConnection>();
  private readonly routes = new Map<string, Map<string, ToolRoute>>();
  private readonly pending = new CallTable<PendingCall>();
  private readonly heartbeat: NodeJS.Timeout;
  private readonly log: NonNullable<WorkerGatewayOptions["log"]>;
  private readonly ids: IdGenerator;
  private readonly heartbeatIntervalMs: number;
  private readonly heartbeatTimeoutMs: number;
  private readonly maxResultBytes: number;
  private readonly maxAttempts: number;
  private closed = false;

  constructor(private readonly options: WorkerGatewayOptions) {
    this.log = options.log ?? (() => {});
    this.ids = options.ids ?? ulidIds();
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 10_000;
    this.heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? 30_000;
    this.maxResultBytes = options.maxResultBytes ?? 1024 * 1024;
    this.maxAttempts = options.maxAttempts ?? 5;
    this.wss = new WebSocketServer({
      noServer: true,
      clientTracking: false,
      perMessageDeflate: false,
      maxPayload: options.maxMessageBytes ?? 16 * 1024 * 1024,
    });
    this.heartbeat = setInterval(() => this.beat(), this.heartbeatIntervalMs);
    this.heartbeat.unref();
  }

  // --- Connections ---------------------------------------------------------

  /** Hand the HTTP server's `upgrade` events for `/v1/workers` to this. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== WORKER_PATH) return refuse(socket, 404, "not_found", `Workers connect to ${WORKER_PATH}.`);
    if (this.closed) return refuse(socket, 503, "unavailable", "The daemon is shutting down; reconnect later.", true);
    const token = bearerToken(req.headers.authorization);
    if (!token) return refuse(socket, 401, "unauthorized", "Send a worker token as `Authorization: Bearer TOKEN` (WARDRIK_TOKEN).");
    // The socket can fail while the token is checked; without a listener that error would crash the daemon.
    const onEarlyError = (): void => {
      socket.destroy();
    };
    socket.on("error", onEarlyError);
    this.options.authenticate(token).then(
      (identity) => {
        socket.off("error", onEarlyError);
        if (socket.destroyed) return;
        if (!identity) return refuse(socket, 401, "unauthorized", "The token is not valid. Check WARDRIK_TOKEN.");
        if (this.closed) return refuse(socket, 503, "unavailable", "The daemon is shutting down; reconnect later.", true);
        this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, identity.org));
      },
      (err: unknown) => {
        socket.off("error", onEarlyError);
        this.log("error", "worker authentication failed", { error: errorMessage(err) });
        refuse(socket, 500, "internal", "The daemon could not check the token; retry later.", true);
      },
    );
  }

  private accept(ws: WebSocket, org: string): void {
    const conn = new WorkerConnection(this.ids.next("worker"), org, ws);
    if (this.closed) {
      conn.close(WORKER_CLOSE_CODES.goingAway, "The daemon is shutting down");
      return;
    }
    this.connections.add(conn);
    ws.on("message", (data, isBinary) => this.onFrame(conn, data, isBinary));
    ws.on("close", (code, reason) => {
      this.connections.delete(conn);
      this.detach(conn);
      this.log("info", "worker disconnected", { ...conn.describe(), code, reason: reason.toString() });
    });
    ws.on("error", (err) => {
      // ws closes the socket after an error (e.g. a message over maxPayload); 'close' does the cleanup.
      this.log("warn", "worker connection error", { ...conn.describe(), error: err.message });
    });
  }

  private onFrame(conn: WorkerConnection, data: RawData, isBinary: boolean): void {
    if (conn.gone) return;
    conn.lastSeen = Date.now();
    if (isBinary) return conn.fail("invalid_message", "Send JSON text frames, not binary ones.");
    const text = data.toString();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      return conn.fail("invalid_message", `The message is not valid JSON (${errorMessage(err)}).`);
    }
    const items = Array.isArray(parsed) ? parsed : [parsed];
    // Result sizes are only measured when the frame itself is big enough to hold an oversized one.
    const checkSizes = (Buffer.isBuffer(data) ? data.length : Buffer.byteLength(text)) > this.maxResultBytes;
    for (const item of items) {
      if (conn.gone) return;
      // Results are most of the traffic; a hand check of their shape spares a schema pass and a copy.
      if (conn.greeted && isResultMessage(item)) {
        this.onResult(conn, item, checkSizes);
        continue;
      }
      const result = WorkerMessage.safeParse(item);
      if (!result.success) {
        const type = isRecord(item) && typeof item.type === "string" ? `"${item.type}" ` : "";
        const issues = result.error.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; ");
        return conn.fail("invalid_message", `Malformed ${type}message: ${issues}`);
      }
      this.onMessage(conn, result.data, checkSizes);
    }
  }

  private onMessage(conn: WorkerConnection, message: WorkerMessage, checkSizes: boolean): void {
    if (!conn.greeted && message.type !== "hello") {
      return conn.fail("hello_required", `The first message must be "hello", not "${message.type}".`);
    }
    switch (message.type) {
      case "hello":
        return this.greet(conn, message);
      case "register":
        return this.register(conn, message);
      case "result":
        return this.onResult(conn, message, checkSizes);
      case "cost": {
        const call = this.pending.get(message.callId);
        if (!call || call.worker !== conn) {
          this.log("debug", "cost for a call that is no longer running was dropped", { ...conn.describe(), callId: message.callId });
          return;
        }
        try {
          call.ctx.cost(message.usd);
        } catch (err) {
          this.log("error", "recording a worker cost failed", { callId: message.callId, error: errorMessage(err) });
        }
        return;
      }
      case "pong":
        return;
      case "drain":
        conn.draining = true;
        conn.send({ type: "draining" });
        this.log("info", "worker draining", conn.describe());
        return;
    }
  }

  private greet(conn: WorkerConnection, message: WorkerHello): void {
    if (conn.greeted) return conn.fail("invalid_message", `"hello" was sent twice.`);
    if (message.protocol !== WORKER_PROTOCOL_VERSION) {
      return conn.fail(
        "unsupported_protocol",
        `This daemon speaks worker protocol ${WORKER_PROTOCOL_VERSION}, the worker ${message.protocol}. Upgrade @wardrik/sdk or the daemon so they match.`,
        WORKER_CLOSE_CODES.unsupportedProtocol,
      );
    }
    conn.greeted = true;
    conn.name = message.name;
    conn.instance = message.instance;
    conn.sdk = message.sdk;
    conn.send({
      type: "welcome",
      protocol: WORKER_PROTOCOL_VERSION,
      workerId: conn.id,
      org: conn.org,
      heartbeatMs: this.heartbeatIntervalMs,
      maxResultBytes: this.maxResultBytes,
    });
    this.log("info", "worker connected", { ...conn.describe(), instance: conn.instance, sdk: conn.sdk });
  }

  private register(conn: WorkerConnection, message: WorkerRegister): void {
    const accepted: string[] = [];
    const skipped: { name: string; reason: string }[] = [];
    const tools = new Map<string, (typeof message.tools)[number]>();
    for (const tool of message.tools) {
      if (!NAME_PATTERN.test(tool.name)) skipped.push({ name: tool.name, reason: `invalid name: ${NAME_RULE}` });
      else if (tools.has(tool.name)) skipped.push({ name: tool.name, reason: "registered twice by this worker" });
      else {
        tools.set(tool.name, tool);
        accepted.push(tool.name);
      }
    }
    for (const name of conn.tools.keys()) {
      if (!tools.has(name)) this.removeFromRoute(conn, name);
    }
    conn.tools = tools;
    for (const name of accepted) {
      const route = this.route(conn.org, name, true);
      if (!route.workers.includes(conn)) route.workers.push(conn);
    }
    conn.send({ type: "registered", accepted, skipped });
    this.log("info", "worker registered tools", { ...conn.describe(), accepted, skipped });
    // Calls that lost their worker, and recovery waiting for a tool, can go on now.
    for (const name of accepted) {
      const route = this.route(conn.org, name, false);
      if (!route) continue;
      for (const waiter of [...route.waiters]) waiter();
      for (const call of [...route.waitingCalls]) {
        const worker = this.pick(route);
        if (!worker) break;
        route.waitingCalls.delete(call);
        this.dispatch(call, worker);
      }
    }
  }

  private onResult(conn: WorkerConnection, message: WorkerResult, checkSize: boolean): void {
    const call = this.pending.get(message.callId);
    if (!call || call.worker !== conn || call.attempt !== message.attempt) {
      this.log("debug", "late result dropped", { ...conn.describe(), callId: message.callId, attempt: message.attempt });
      return;
    }
    if (!message.ok) return this.finish(call, { ok: false, kind: "failed", error: truncate(message.error, this.maxResultBytes) });
    const output = message.output ?? null;
    if (checkSize) {
      const size = Buffer.byteLength(JSON.stringify(output));
      if (size > this.maxResultBytes) {
        return this.finish(call, {
          ok: false,
          kind: "failed",
          error: `workers/${call.tool} returned ${size} bytes; the limit is ${this.maxResultBytes}. Return only what the model needs.`,
        });
      }
    }
    this.finish(call, { ok: true, output });
  }

  /** Takes a connection out of routing and settles the calls it was running. Safe to call twice. */
  private detach(conn: WorkerConnection): void {
    conn.gone = true;
    for (const name of conn.tools.keys()) this.removeFromRoute(conn, name);
    const calls = conn.inFlight === 0 ? [] : this.pending.values().filter((c) => c.worker === conn);
    conn.inFlight = 0;
    for (const call of calls) {
      call.worker = undefined;
      if (call.done) continue;
      if (!call.retryable) {
        this.finish(call, { ok: false, kind: "lost", error: LOST_MESSAGE });
        continue;
      }
      if (call.attempt >= this.maxAttempts) {
        this.finish(call, {
          ok: false,
          kind: "failed",
          error: `workers/${call.tool} lost its worker on each of ${call.attempt} attempts; the call may be crashing it.`,
        });
        continue;
      }
      call.attempt += 1;
      const route = this.route(call.ctx.org, call.tool, true);
      const next = this.pick(route);
      this.log("info", next ? "call re-dispatched after its worker was lost" : "call waits for a worker after its worker was lost", {
        callId: call.ctx.callId,
        tool: call.tool,
        attempt: call.attempt,
        from: conn.id,
        to: next?.id,
      });
      if (next) this.dispatch(call, next);
      else route.waitingCalls.add(call);
    }
  }

  private beat(): void {
    const now = Date.now();
    for (const conn of this.connections) {
      if (now - conn.lastSeen > this.heartbeatTimeoutMs) {
        this.log("warn", "worker dropped: silent for too long", { ...conn.describe(), silentMs: now - conn.lastSeen });
        this.connections.delete(conn);
        conn.terminate();
        this.detach(conn);
      } else {
        conn.send({ type: "ping", ts: now });
      }
    }
  }

  // --- Routing ------------------------------------------------------------

  private route(org: string, tool: string, create: true): ToolRoute;
  private route(org: string, tool: string, create: false): ToolRoute | undefined;
  private route(org: string, tool: string, create: boolean): ToolRoute | undefined {
    let byTool = this.routes.get(org);
    if (!byTool) {
      if (!create) return undefined;
      byTool = new Map();
      this.routes.set(org, byTool);
    }
    let route = byTool.get(tool);
    if (!route && create) {
      route = { workers: [], next: 0, waitingCalls: new Set(), waiters: new Set() };
      byTool.set(tool, route);
    }
    return route;
  }

  private removeFromRoute(conn: WorkerConnection, tool: string): void {
    const byTool = this.routes.get(conn.org);
    const route = byTool?.get(tool);
    if (!byTool || !route) return;
    const i = route.workers.indexOf(conn);
    if (i >= 0) route.workers.splice(i, 1);
    if (route.workers.length === 0 && route.waitingCalls.size === 0 && route.waiters.size === 0) {
      byTool.delete(tool);
      if (byTool.size === 0) this.routes.delete(conn.org);
    }
  }

  /** The available worker with the fewest calls in flight; the starting point rotates so ties alternate. */
  private pick(route: ToolRoute): WorkerConnection | undefined {
    const n = route.workers.length;
    if (n === 0) return undefined;
    if (n === 1) return route.workers[0]!.available ? route.workers[0] : undefined;
    let best: WorkerConnection | undefined;
    for (let i = 0; i < n; i++) {
      const worker = route.workers[(route.next + i) % n]!;
      if (worker.available && (!best || worker.inFlight < best.inFlight)) best = worker;
    }
    route.next = (route.next + 1) % n;
    return best;
  }

  // --- Toolset ------------------------------------------------------------

  list(scope: ToolScope): ToolInfo[] {
    const byTool = this.routes.get(scope.org);
    if (!byTool) return [];
    const out: ToolInfo[] = [];
    for (const [name, route] of byTool) {
      // The most recently registered worker's definition wins when workers disagree.
      const worker = route.workers.findLast((w) => w.available);
      const tool = worker?.tools.get(name);
      if (!tool) continue;
      const info: ToolInfo = {
        name: `${NAMESPACE}/${name}`,
        description: tool.description,
        inputSchema: tool.inputSchema,
        readOnly: tool.readOnly,
        idempotent: tool.idempotent,
      };
      if (tool.title !== undefined) info.title = tool.title;
      out.push(info);
    }
    return out;
  }

  status(scope: ToolScope): { name: string; status: string; reason?: string }[] {
    const out: { name: string; status: string; reason?: string }[] = [];
    for (const conn of this.connections) {
      if (conn.org !== scope.org || !conn.greeted) continue;
      out.push({
        name: `worker ${conn.name} (${conn.id})`,
        status: conn.draining ? "draining" : "connected",
        reason: `serves ${conn.tools.size} tool${conn.tools.size === 1 ? "" : "s"}: ${[...conn.tools.keys()].join(", ")}`,
      });
    }
    return out;
  }

  call(tool: string, args: unknown, ctx: ToolCallContext): Promise<ToolOutcome> {
    const full = `${NAMESPACE}/${tool}`;
    if (ctx.signal.aborted) return Promise.resolve(stopped(full, ctx.signal.reason));
    const route = this.closed ? undefined : this.route(ctx.org, tool, false);
    const worker = route && this.pick(route);
    if (!worker) {
      return Promise.resolve({
        ok: false,
        kind: "unavailable",
        error: `No worker serves ${full}. Start a worker process that registers "${tool}" with wardrik.tool() and calls listen().`,
      });
    }
    if (this.pending.has(ctx.callId)) {
      return Promise.resolve({ ok: false, kind: "failed", error: `Call ${ctx.callId} is already running.` });
    }
    const descriptor = worker.tools.get(tool);
    return new Promise<ToolOutcome>((resolve) => {
      const call: PendingCall = {
        tool,
        args: args ?? {},
        ctx,
        deadline: Date.now() + ctx.timeoutMs,
        retryable: descriptor !== undefined && (descriptor.readOnly || descriptor.idempotent),
        attempt: 1,
        worker: undefined,
        done: false,
        timer: undefined,
        onAbort: () => {
          call.worker?.send({ type: "abort", callId: ctx.callId, reason: isTurnStop(ctx.signal.reason) ? "cancelled" : "killed" });
          this.finish(call, stopped(full, ctx.signal.reason));
        },
        resolve,
      };
      this.pending.set(ctx.callId, call);
      // setTimeout cannot hold more than ~24.8 days; longer means no timeout.
      if (Number.isFinite(ctx.timeoutMs) && ctx.timeoutMs <= 2 ** 31 - 1) {
        call.timer = setTimeout(
          () => {
            call.worker?.send({ type: "abort", callId: ctx.callId, reason: "timeout" });
            const waited = call.worker ? "" : " while waiting for a worker (its worker was lost)";
            this.finish(call, { ok: false, kind: "timeout", error: `${full} timed out after ${formatSeconds(ctx.timeoutMs)}${waited}.` });
          },
          Math.max(0, ctx.timeoutMs),
        );
      }
      ctx.signal.addEventListener("abort", call.onAbort, { once: true });
      this.dispatch(call, worker);
    });
  }

  private dispatch(call: PendingCall, worker: WorkerConnection): void {
    call.worker = worker;
    worker.inFlight += 1;
    worker.send({
      type: "call",
      callId: call.ctx.callId,
      attempt: call.attempt,
      tool: call.tool,
      args: call.args,
      ctx: {
        agent: call.ctx.agent,
        run: call.ctx.run,
        idempotencyKey: call.ctx.idempotencyKey,
        timeoutMs: Math.max(0, Math.min(2 ** 31 - 1, Math.round(call.deadline - Date.now()))),
      },
    });
  }

  private finish(call: PendingCall, outcome: ToolOutcome): void {
    if (call.done) return;
    call.done = true;
    if (call.timer) clearTimeout(call.timer);
    call.ctx.signal.removeEventListener("abort", call.onAbort);
    if (call.worker) call.worker.inFlight -= 1;
    call.worker = undefined;
    this.pending.delete(call.ctx.callId);
    const route = this.route(call.ctx.org, call.tool, false);
    if (route?.waitingCalls.delete(call) && route.workers.length === 0 && route.waiters.size === 0 && route.waitingCalls.size === 0) {
      this.routes.get(call.ctx.org)?.delete(call.tool);
    }
    call.resolve(outcome);
  }

  /** Resolves true as soon as some worker of `org` serves `tool`, false after `timeoutMs`. Crash recovery waits on this. */
  /** Toolset seam: recovery waits for a worker of the tool to (re)connect. */
  waitFor(tool: string, scope: ToolScope, timeoutMs: number): Promise<boolean> {
    return this.waitForTool(scope.org, tool, timeoutMs);
  }

  waitForTool(org: string, tool: string, timeoutMs: number): Promise<boolean> {
    const route = this.route(org, tool, false);
    if (route?.workers.some((w) => w.available)) return Promise.resolve(true);
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const r = this.route(org, tool, true);
      const done = (value: boolean): void => {
        clearTimeout(timer);
        r.waiters.delete(waiter);
        if (r.workers.length === 0 && r.waiters.size === 0 && r.waitingCalls.size === 0) this.routes.get(org)?.delete(tool);
        resolve(value);
      };
      const waiter = (): void => done(!this.closed);
      const timer = setTimeout(() => done(false), Math.max(0, timeoutMs));
      r.waiters.add(waiter);
    });
  }

  /** Settles every open call as lost, closes every worker connection, and stops the heartbeat. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    for (const call of this.pending.values()) this.finish(call, { ok: false, kind: "lost", error: LOST_MESSAGE });
    for (const byTool of this.routes.values()) {
      for (const route of byTool.values()) for (const waiter of [...route.waiters]) waiter();
    }
    await Promise.all(
      [...this.connections].map(async (conn) => {
        conn.close(WORKER_CLOSE_CODES.goingAway, "The daemon is shutting down");
        // A worker that does not answer the close handshake is cut off.
        const timer = setTimeout(() => conn.terminate(), 2000);
        await conn.closed;
        clearTimeout(timer);
      }),
    );
    this.wss.close();
  }
}

/** The outcome of a call stopped through ctx.signal: a person's kill or its turn ending. */
function stopped(full: string, reason: unknown): ToolOutcome {
  const error = isTurnStop(reason)
    ? `${full} was stopped because its turn ended before it finished.`
    : `${full} was killed before it finished.`;
  return { ok: false, kind: "killed", error };
}

/** The runtime aborts with a TurnStop (`why`) when a turn is cancelled or times out; anything else is a kill. */
function isTurnStop(reason: unknown): boolean {
  return reason === "cancelled" || (isRecord(reason) && typeof reason.why === "string");
}

function bearerToken(header: string | undefined): string | undefined {
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return m?.[1];
}

function refuse(socket: Duplex, status: number, code: string, message: string, retryable = false): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ error: { code, message, retryable } });
  const text = { 401: "Unauthorized", 404: "Not Found", 500: "Internal Server Error", 503: "Service Unavailable" }[status] ?? "Error";
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Exactly what the WorkerResult schema accepts, checked by hand for the hot path. */
function isResultMessage(item: unknown): item is WorkerResult {
  if (!isRecord(item) || item.type !== "result") return false;
  const { callId, attempt, ok } = item;
  if (typeof callId !== "string" || callId.length === 0 || callId.length > 200) return false;
  if (typeof attempt !== "number" || !Number.isInteger(attempt) || attempt < 1) return false;
  return ok === true || (ok === false && typeof item.error === "string");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max) + "... (truncated)";
}
