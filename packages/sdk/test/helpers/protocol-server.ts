/**
 * A small loopback server that speaks the worker protocol from
 * `@wardrik/protocol`: every message a worker sends is checked against the
 * protocol's schemas (a message that does not parse fails the test), hello is
 * answered with welcome, register with registered, drain with draining. Tests
 * drive the rest: send calls and aborts, drop connections, stop the server and
 * start it again on the same port, as a daemon restart would.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import {
  WORKER_PATH,
  WORKER_PROTOCOL_VERSION,
  WorkerMessage,
  type DaemonCall,
  type DaemonMessage,
  type WorkerMessage as WorkerMessageType,
} from "@wardrik/protocol";

export interface ProtocolConnection {
  ws: WebSocket;
  /** Every message received on this connection, in order, as parsed by the protocol's schema. */
  received: WorkerMessageType[];
  send(message: DaemonMessage): void;
  /** A call with sensible defaults for ctx. */
  call(fields: Pick<DaemonCall, "callId" | "tool"> & Partial<DaemonCall>): void;
}

export interface ProtocolServer {
  readonly url: string;
  readonly port: number;
  readonly connections: ProtocolConnection[];
  /** Messages that did not parse as worker messages (should stay empty). */
  readonly invalid: string[];
  /** Closes every connection with `code` (1001 is a daemon going away) and stops listening. */
  stop(code?: number): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
}

export const CALL_CTX = { agent: "agt_1", run: "run_1", idempotencyKey: "key_1", timeoutMs: 60_000 } as const;

export async function protocolServer(options: { heartbeatMs?: number } = {}): Promise<ProtocolServer> {
  const connections: ProtocolConnection[] = [];
  const invalid: string[] = [];
  let port = 0;
  let server: Server | undefined;
  let wss: WebSocketServer | undefined;
  let live: WebSocket[] = [];

  const accept = (ws: WebSocket): void => {
    live.push(ws);
    const conn: ProtocolConnection = {
      ws,
      received: [],
      send: (message) => ws.send(JSON.stringify(message)),
      call: (fields) => conn.send({ type: "call", attempt: 1, args: {}, ctx: { ...CALL_CTX }, ...fields }),
    };
    connections.push(conn);
    ws.on("close", () => (live = live.filter((w) => w !== ws)));
    ws.on("message", (data) => {
      const text = data.toString();
      const parsed = JSON.parse(text) as unknown;
      for (const item of Array.isArray(parsed) ? parsed : [parsed]) {
        const result = WorkerMessage.safeParse(item);
        if (!result.success) {
          invalid.push(JSON.stringify(item));
          continue;
        }
        const message = result.data;
        conn.received.push(message);
        if (message.type === "hello") {
          conn.send({
            type: "welcome",
            protocol: WORKER_PROTOCOL_VERSION,
            workerId: `wkr_${connections.length}`,
            org: "default",
            heartbeatMs: options.heartbeatMs ?? 10_000,
            maxResultBytes: 1024 * 1024,
          });
        } else if (message.type === "register") {
          conn.send({ type: "registered", accepted: message.tools.map((t) => t.name), skipped: [] });
        } else if (message.type === "drain") {
          conn.send({ type: "draining" });
        }
      }
    });
  };

  const start = async (): Promise<void> => {
    server = createServer((_req, res) => res.writeHead(404).end());
    wss = new WebSocketServer({ noServer: true });
    const ws = wss;
    server.on("upgrade", (req, socket, head) => {
      if (req.url !== WORKER_PATH) return socket.destroy();
      ws.handleUpgrade(req, socket, head, accept);
    });
    server.listen(port, "127.0.0.1");
    await once(server, "listening");
    port = (server.address() as AddressInfo).port;
  };

  const stop = async (code = 1001): Promise<void> => {
    // Stop taking connections first, as a daemon that is shutting down does: a worker retrying during the closing handshakes must not be taken back for a moment.
    const s = server;
    const closed = s ? new Promise<void>((resolve) => s.close(() => resolve())) : Promise.resolve();
    for (const ws of live) ws.close(code, code === 1001 ? "The daemon is shutting down" : "closed");
    // Wait for the closing handshakes so the worker sees the code, then cut whatever is left.
    const deadline = Date.now() + 2000;
    while (live.length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    for (const ws of live) ws.terminate();
    wss?.close();
    s?.closeAllConnections();
    await closed;
    server = undefined;
  };

  await start();
  return {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    connections,
    invalid,
    stop,
    start,
  };
}

/** Polls until `check` holds. */
export async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
