/**
 * A real node:http server on 127.0.0.1:0 for provider wire-format tests, and
 * the tools to answer with Server-Sent Events cut at awkward byte boundaries
 * (mid-line, mid-JSON, between the two newlines that end an event, inside
 * multi-byte UTF-8 characters).
 */
import { createServer } from "node:http";
import type { IncomingHttpHeaders, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  raw: string;
  /** performance.now() when the request's body had arrived. */
  at: number;
}

/** Answers one request; `index` counts requests from 0 since the last reset. */
export type Responder = (req: Received, res: ServerResponse, index: number) => Promise<void> | void;

export interface Loopback {
  /** http://127.0.0.1:PORT/v1 */
  baseUrl: string;
  port: number;
  received: Received[];
  respond: Responder;
  reset(): void;
  close(): Promise<void>;
}

export async function startLoopback(): Promise<Loopback> {
  const state: Loopback = {
    baseUrl: "",
    port: 0,
    received: [],
    respond: (_req, res) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.end('{"error":{"message":"no responder"}}');
    },
    reset() {
      state.received = [];
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let body: Record<string, unknown> = {};
      try {
        body = raw === "" ? {} : (JSON.parse(raw) as Record<string, unknown>);
      } catch {
        body = {};
      }
      const r: Received = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body, raw, at: performance.now() };
      state.received.push(r);
      Promise.resolve(state.respond(r, res, state.received.length - 1)).catch((err: unknown) => res.destroy(err as Error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.port = (server.address() as AddressInfo).port;
  state.baseUrl = `http://127.0.0.1:${state.port}/v1`;
  return state;
}

export interface SseEvent {
  /** The `event:` line; omitted when undefined. */
  event?: string;
  data: unknown;
}

/** SSE text for these events; `eol` lets a test use CRLF line ends. */
export function sseText(events: SseEvent[], eol = "\n"): string {
  return events
    .map((e) => (e.event === undefined ? "" : `event: ${e.event}${eol}`) + `data: ${JSON.stringify(e.data)}${eol}${eol}`)
    .join("");
}

/**
 * Cuts `body` into small pieces of varying size, and in the middle of every
 * occurrence of each of `inside` (e.g. "🌍" is cut after its second byte,
 * "\n\n" between its newlines).
 */
export function awkwardPieces(body: Buffer, inside: string[] = []): Buffer[] {
  const cuts = new Set<number>();
  for (const marker of inside) {
    const bytes = Buffer.from(marker, "utf8");
    for (let at = body.indexOf(bytes); at >= 0; at = body.indexOf(bytes, at + 1)) cuts.add(at + Math.max(1, Math.floor(bytes.length / 2)));
  }
  const sizes = [1, 7, 3, 13, 2, 29, 5, 64];
  for (let at = 0, i = 0; at < body.length; at += sizes[i++ % sizes.length]!) cuts.add(at);
  const sorted = [...cuts].filter((c) => c > 0 && c < body.length).sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let start = 0;
  for (const cut of sorted) {
    pieces.push(body.subarray(start, cut));
    start = cut;
  }
  pieces.push(body.subarray(start));
  return pieces;
}

/** Markers whose middle is always a cut: multi-byte characters, event ends, line starts. */
export const AWKWARD = ["🌍", "ö", "é", "\n\n", "\r\n", "data: ", '":"'];

/** Writes an SSE body piece by piece with a pause between, so the client reads split chunks. */
export async function writeSse(
  res: ServerResponse,
  text: string,
  opts: { status?: number; headers?: Record<string, string>; end?: boolean } = {},
): Promise<void> {
  res.writeHead(opts.status ?? 200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...opts.headers });
  res.socket?.setNoDelay(true);
  for (const piece of awkwardPieces(Buffer.from(text, "utf8"), AWKWARD)) {
    res.write(piece);
    await sleep(1);
  }
  if (opts.end !== false) res.end();
}

/** A responder that answers with a JSON body and this status. */
export function jsonReply(status: number, body: unknown, headers: Record<string, string> = {}): Responder {
  return (_req, res) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  };
}
