import type { IncomingMessage } from "node:http";
import { createRequire } from "node:module";
import type { Duplex } from "node:stream";
import type * as wsModule from "ws";
import type { RawData, WebSocket, WebSocketServer } from "ws";
import {
  DEFAULT_JSON_DEPTH,
  WORKER_CLOSE_CODES,
  WORKER_PROTOCOL_VERSION,
  type WorkerHello,
  type WorkerMessage,
  type WorkerRegister,
} from "@wardrik/protocol";
import { ulidIds, type IdGenerator } from "../../ids.js";
import { silentLogger, type Logger } from "../../log/logger.js";
import type { LateAnswer, RecallAnswer, RecallQuestion, ToolCallContext, ToolInfo, ToolOutcome, ToolScope } from "../toolset.js";
import type { Toolset, WorkerRef } from "../toolset.js";
import { stopWatchOf } from "../call-stopper.js";
import { WorkerCalls } from "./worker-calls.js";
import { WorkerRecall } from "./worker-recall.js";
import { WorkerConnection } from "./worker-connection.js";
import type { RemoteWorkers } from "./remote-workers.js";
import { WorkerRegistration } from "./worker-registration.js";
import { WorkerRoutes } from "./worker-routes.js";
import { workerSources, type WorkerSourceStatus } from "./worker-status.js";
import { checkUpgrade, readFrame, takeItems } from "./worker-wire.js";

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
  /** How deep a message may nest (config.yaml `limits.json_depth`); a deeper one closes the connection. Default 64. */
  maxJsonDepth?: number;
  /**
   * config.yaml `worker_grace`: after the gateway starts, calls to a tool no
   * worker serves yet wait this long for workers to reconnect; and a call
   * whose worker goes away waits this long for its answer (a reconnecting
   * worker delivers it). Default 30 s.
   */
  reconnectGraceMs?: number;
  /** An answer for a call nobody here waits for (a worker that kept it through a restart, or came back late). */
  onLateAnswer?: (org: string, answer: LateAnswer) => void;
  /** A call left for a worker connected here: which worker (the record keeps it, for a person asked about a lost answer). */
  onDispatched?: (org: string, callId: string, worker: WorkerRef, answered: () => boolean) => void;
  /** Workers connected to other nodes of a cluster. */
  remote?: RemoteWorkers;
  ids?: IdGenerator;
}

const NAMESPACE = "workers";

/** How a call with no worker to send it to at once looks for one; `asked`: mayStart's answer already, not asked again. */
type FindWorker = { mayForward: boolean; asked?: Promise<boolean> };

/**
 * The `workers` toolset: worker processes (the SDK) connect over WebSocket at
 * `/v1/workers`, register tools, and run the calls the runtime sends through
 * `call()`. Tools belong to the org of the worker's token.
 */
export class WorkerGateway implements Toolset {
  readonly namespace = NAMESPACE;
  readonly kind = "workers" as const;
  /** Made at the first worker's connection: `ws` and the Node modules it needs cost a start about 15 ms of CPU. */
  private wss: WebSocketServer | undefined;
  private readonly connections = new Set<WorkerConnection>();
  private readonly routes = new WorkerRoutes();
  private readonly registration: WorkerRegistration;
  private readonly calls: WorkerCalls;
  private readonly recaller: WorkerRecall;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly log: Logger;
  private readonly ids: IdGenerator;
  private readonly heartbeatIntervalMs: number;
  private readonly heartbeatTimeoutMs: number;
  private readonly maxResultBytes: number;
  private readonly maxJsonDepth: number;
  private readonly graceEndsAt: number;
  private readonly graceMs: number;
  private closed = false;

  constructor(private readonly options: WorkerGatewayOptions) {
    this.log = options.log ?? silentLogger;
    this.ids = options.ids ?? ulidIds();
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 10_000;
    this.heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? 30_000;
    this.maxResultBytes = options.maxResultBytes ?? 1024 * 1024;
    this.maxJsonDepth = options.maxJsonDepth ?? DEFAULT_JSON_DEPTH;
    const graceMs = options.reconnectGraceMs ?? 30_000;
    this.graceMs = graceMs;
    this.graceEndsAt = Date.now() + graceMs;
    this.registration = new WorkerRegistration(this.routes, this.connections, this.log);
    const { onLateAnswer, onDispatched } = options;
    this.calls = new WorkerCalls({ graceMs, maxResultBytes: this.maxResultBytes, log: this.log, onLateAnswer, onDispatched });
    this.recaller = new WorkerRecall({
      connections: (org) => [...this.connections].filter((c) => c.org === org && c.greeted && !c.gone),
      calls: this.calls,
      remote: options.remote,
      closed: () => this.closed,
      log: this.log,
    });
    this.heartbeat = setInterval(() => this.beat(), this.heartbeatIntervalMs);
    this.heartbeat.unref();
  }

  // --- Connections ---------------------------------------------------------

  /** Hand the HTTP server's `upgrade` events for `/v1/workers` to this. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const gate = { closed: () => this.closed, authenticate: this.options.authenticate, log: this.log };
    checkUpgrade(req, socket, gate, (org) => this.server().handleUpgrade(req, socket, head, (ws) => this.accept(ws, org)));
  }

  private server(): WebSocketServer {
    return (this.wss ??= new (createRequire(import.meta.url)("ws") as typeof wsModule).WebSocketServer({
      noServer: true,
      clientTracking: false,
      perMessageDeflate: false,
      maxPayload: this.options.maxMessageBytes ?? 16 * 1024 * 1024,
    }));
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
      this.recaller.dropped(conn);
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
    const frame = readFrame(data, isBinary, this.maxJsonDepth);
    if ("problem" in frame) return conn.fail("invalid_message", frame.problem);
    // Result sizes are only measured when the frame itself is big enough to hold an oversized one.
    const checkSizes = frame.bytes > this.maxResultBytes;
    const malformed = takeItems(
      frame.items,
      conn,
      (result) => this.calls.result(conn, result, checkSizes),
      (message) => this.onMessage(conn, message, checkSizes),
    );
    if (malformed !== undefined && !conn.gone) conn.fail("invalid_message", malformed);
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
        return this.calls.result(conn, message, checkSizes);
      case "cost":
        return this.calls.cost(conn, message);
      case "recalled":
        return this.recaller.answered(conn, message);
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
    this.registration.register(conn, message);
    this.options.remote?.publish(conn.org, this.routes.tools(conn.org));
  }

  /** Takes a connection out of routing; its calls wait for their answers a while. Safe to call twice. */
  private detach(conn: WorkerConnection): void {
    conn.gone = true;
    for (const name of conn.tools.keys()) this.routes.remove(conn, name);
    // A worker refused a tool this one served with another definition may serve it now.
    this.registration.adoptRefused(conn.org, conn.tools.keys());
    if (conn.tools.size > 0) this.options.remote?.publish(conn.org, this.routes.tools(conn.org));
    this.calls.detach(conn);
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

  // --- Toolset ------------------------------------------------------------

  list(scope: ToolScope): ToolInfo[] {
    const local = this.routes.tools(scope.org);
    const here = new Set(local.map((t) => t.name));
    const elsewhere = (this.options.remote?.tools(scope.org) ?? []).filter((t) => !here.has(t.name));
    return [...local, ...elsewhere].map(({ name, descriptor: tool }) => {
      const info: ToolInfo = {
        name: `${NAMESPACE}/${name}`,
        description: tool.description,
        inputSchema: tool.inputSchema,
        readOnly: tool.readOnly,
        idempotent: tool.idempotent,
      };
      if (tool.title !== undefined) info.title = tool.title;
      return info;
    });
  }

  /** Open connections by org, for the wardrik_worker_connections metric. */
  connectionsByOrg(): Map<string, number> {
    const out = new Map<string, number>();
    for (const conn of this.connections) out.set(conn.org, (out.get(conn.org) ?? 0) + 1);
    return out;
  }

  status(scope: ToolScope): WorkerSourceStatus[] {
    return workerSources(this.connections, scope.org, this.options.remote?.nodes(scope.org) ?? []);
  }

  servers(scope: ToolScope, tool: string): string[] {
    const here = this.routes.workersOf(scope.org, tool).map((w) => `${w.name} (${w.id}${w.draining ? ", draining" : ""})`);
    const elsewhere = (this.options.remote?.nodes(scope.org) ?? []).filter((n) => n.tools.includes(tool)).map((n) => `node ${n.node}`);
    return [...here, ...elsewhere];
  }

  /**
   * Sends a call to a worker of the tool: one connected here, else (in a
   * cluster) one connected to another node. With none it fails at once,
   * except while workers may be reconnecting: right after this gateway
   * starts, and in a cluster always (a worker whose node died moves to
   * another); then it waits for one while the grace lasts.
   */
  call(tool: string, args: unknown, ctx: ToolCallContext): Promise<ToolOutcome> {
    return this.callOn(tool, args, ctx, true);
  }

  /** A call another node sent here: only this node's workers may run it. */
  callLocal(tool: string, args: unknown, ctx: ToolCallContext): Promise<ToolOutcome> {
    return this.callOn(tool, args, ctx, false);
  }

  private callOn(tool: string, args: unknown, ctx: ToolCallContext, mayForward: boolean): Promise<ToolOutcome> {
    // Most calls find a worker here at once: no async frame (and its promise) for them.
    const worker = this.closed || stopWatchOf(ctx).reason ? undefined : this.routes.pick(ctx.org, tool);
    if (!worker) return this.findWorker(tool, args, ctx, { mayForward });
    // Right before it leaves: a call that may not go any more would run again what another node already ran.
    const may = ctx.mayStart === undefined ? true : ctx.mayStart(false);
    if (may !== true) return this.findWorker(tool, args, ctx, { mayForward, asked: may });
    try {
      return this.calls.start(tool, args, ctx, worker);
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  private async findWorker(tool: string, args: unknown, ctx: ToolCallContext, how: FindWorker): Promise<ToolOutcome> {
    let asked = how.asked;
    const full = `${NAMESPACE}/${tool}`;
    const remote = how.mayForward ? this.options.remote : undefined;
    const deadline = Math.max(this.graceEndsAt, remote ? Date.now() + this.graceMs : 0);
    const stop = stopWatchOf(ctx);
    const refused: ToolOutcome = { ok: false, kind: "killed", error: `${full} was not sent: this node no longer runs it.` };
    let waited = false;
    for (;;) {
      if (stop.reason) return { ok: false, kind: "killed", error: `${full} was stopped before it started.` };
      const worker = this.closed ? undefined : this.routes.pick(ctx.org, tool);
      const may = asked ?? (worker || remote ? (ctx.mayStart?.(waited) ?? true) : true);
      asked = undefined;
      if (may !== true) {
        if (!(await may)) return refused;
        // Asked and answered: picked again (a worker may have left meanwhile) and sent with no further wait.
        const again = this.closed ? undefined : this.routes.pick(ctx.org, tool);
        if (again) return this.calls.start(tool, args, ctx, again);
      } else if (worker) return this.calls.start(tool, args, ctx, worker);
      // No worker here: a worker connected to another node of the cluster serves it.
      const answer = remote && !this.closed ? await remote.call(ctx.org, tool, args, ctx) : undefined;
      if (answer) return answer;
      waited = true;
      const left = deadline - Date.now();
      if (this.closed || left <= 0) {
        return {
          ok: false,
          kind: "unavailable",
          error: `No worker serves ${full}. Start a worker process that registers "${tool}" with wardrik.tool() and calls listen().`,
        };
      }
      // A local worker wakes this at once; other nodes' workers are looked for again soon.
      await this.routes.waitFor(ctx.org, tool, remote ? Math.min(left, 200) : left, () => this.closed || stop.reason !== undefined);
    }
  }

  /** Toolset seam: asks every worker of the org, on every node, whether it knows the call (see WorkerRecall). */
  recall(question: RecallQuestion, scope: ToolScope): Promise<RecallAnswer> {
    return this.recaller.recall(scope.org, question, true);
  }

  /** A question another node asks of the workers connected here. */
  recallHere(org: string, question: RecallQuestion): Promise<RecallAnswer> {
    return this.recaller.recall(org, question, false);
  }

  /** Toolset seam: wait for a worker of the tool to (re)connect. */
  waitFor(tool: string, scope: ToolScope, timeoutMs: number): Promise<boolean> {
    return this.waitForTool(scope.org, tool, timeoutMs);
  }

  /**
   * Resolves true as soon as some worker of `org` serves `tool`, false after
   * `timeoutMs`. In a cluster a worker may be moving to another node at any
   * time (its node died), so the wait is at least the reconnect grace, and a
   * worker on any node counts.
   */
  async waitForTool(org: string, tool: string, timeoutMs: number): Promise<boolean> {
    const remote = this.options.remote;
    if (!remote) return this.routes.waitFor(org, tool, timeoutMs, () => this.closed);
    const deadline = Date.now() + Math.max(timeoutMs, this.graceMs);
    for (;;) {
      if (this.routes.tools(org).some((t) => t.name === tool) || remote.tools(org).some((t) => t.name === tool)) return true;
      const left = deadline - Date.now();
      if (this.closed || left <= 0) return false;
      await this.routes.waitFor(org, tool, Math.min(left, 200), () => this.closed);
    }
  }

  /** Settles every open call as lost, tells every worker the daemon is going away, and stops the heartbeat. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    this.calls.closeAll();
    this.routes.wakeAll();
    await Promise.all(
      [...this.connections].map(async (conn) => {
        conn.close(WORKER_CLOSE_CODES.goingAway, "The daemon is shutting down");
        // A worker that does not answer the close handshake is cut off.
        const timer = setTimeout(() => conn.terminate(), 2000);
        await conn.closed;
        clearTimeout(timer);
      }),
    );
    this.wss?.close();
  }
}
