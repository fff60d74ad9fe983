/**
 * A real HTTP server on 127.0.0.1 that receives webhook deliveries and
 * records each request; `respond` decides every answer (a status with
 * headers, or `hang` for no answer at all), so a test can fail the first
 * attempts, ask for Retry-After, or play a dead subscriber.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterThisFile } from "./file-cleanups.js";

export interface ReceivedRequest {
  /** Milliseconds since the epoch when the request arrived. */
  at: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON (the CloudEvent). */
  json: { id: string; type: string; seq: number; source: string; data: Record<string, unknown>; [k: string]: unknown };
  /** The status this request was answered with (undefined while it hangs). */
  status?: number;
}

export type Answer = { status: number; headers?: Record<string, string>; body?: string } | "hang";

export interface Receiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Decides the answer to each request; default 200. Replace it at any time. */
  respond: (req: ReceivedRequest, index: number) => Answer;
  /** Requests answered 2xx, in arrival order. */
  accepted(): ReceivedRequest[];
  close(): Promise<void>;
}

/** Receivers not closed yet: each is closed when the test file ends, if the test did not. */
const open = new Set<Receiver>();

/** Starts a receiver; `port` reuses a port (a receiver that comes back after being down). */
export async function startReceiver(options: { port?: number; respond?: Receiver["respond"] } = {}): Promise<Receiver> {
  const hanging = new Set<ServerResponse>();
  const receiver: Receiver = {
    url: "",
    port: 0,
    requests: [],
    respond: options.respond ?? (() => ({ status: 200 })),
    accepted: () => receiver.requests.filter((r) => r.status !== undefined && r.status >= 200 && r.status < 300),
    close: async () => {
      open.delete(receiver);
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      let json: ReceivedRequest["json"];
      try {
        json = JSON.parse(body) as ReceivedRequest["json"];
      } catch {
        json = { id: "", type: "", seq: -1, source: "", data: {} };
      }
      const record: ReceivedRequest = { at: Date.now(), headers: req.headers, body, json };
      const index = receiver.requests.push(record) - 1;
      const answer = receiver.respond(record, index);
      if (answer === "hang") {
        hanging.add(res);
        res.on("close", () => hanging.delete(res));
        return;
      }
      record.status = answer.status;
      res.writeHead(answer.status, { "content-type": "text/plain", ...answer.headers });
      res.end(answer.body ?? "");
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hook`;
  open.add(receiver);
  afterThisFile(() => (open.has(receiver) ? receiver.close() : undefined));
  return receiver;
}
