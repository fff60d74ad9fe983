/**
 * `WardrikClient.follow` reads server-sent events as the spec frames them:
 * lines may end in CRLF, CR or LF, and a line end may be split across chunks.
 * The server here is a real loopback HTTP server writing raw bytes.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, test } from "vitest";
import { WardrikClient } from "../src/index.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

function event(seq: number, type = "dev.wardrik.message.queued"): string {
  return JSON.stringify({
    specversion: "1.0",
    id: `evt_${seq}`,
    source: "/agents/agt_1",
    type,
    time: "2026-01-01T00:00:00Z",
    seq,
    data: {},
  });
}

/**
 * Serves each stream request with `chunks(request)`, written one by one with a
 * pause between them; the response stays open, as the daemon's does, unless `end`.
 */
async function sseServer(
  chunks: (req: IncomingMessage, n: number) => string[],
  end = false,
): Promise<{ url: string; requests: IncomingMessage[] }> {
  const requests: IncomingMessage[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    requests.push(req);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    void (async () => {
      for (const chunk of chunks(req, requests.length)) {
        res.write(chunk);
        await new Promise((r) => setTimeout(r, 5));
      }
      if (end) res.end();
    })();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

async function follow(url: string, count: number, deltas: string[] = []): Promise<number[]> {
  const client = new WardrikClient({ url, token: "t" });
  const controller = new AbortController();
  const seqs: number[] = [];
  for await (const e of client.follow("agt_1", { signal: controller.signal, onDelta: (_run, text) => deltas.push(text) })) {
    seqs.push(e.seq);
    if (seqs.length === count) break;
  }
  controller.abort();
  return seqs;
}

test.each([
  ["CRLF", "\r\n"],
  ["CR", "\r"],
  ["LF", "\n"],
])("events framed with %s line ends arrive, deltas and comments included", async (_name, eol) => {
  const { url } = await sseServer(() => [
    `: keep-alive${eol}${eol}`,
    `id: 1${eol}event: event${eol}data: ${event(1)}${eol}${eol}`,
    `event: delta${eol}data: {"run":"run_1","text":"Hel"}${eol}${eol}event: delta${eol}data: {"run":"run_1","text":"lo"}${eol}${eol}`,
    `id: 2${eol}data: ${event(2, "dev.wardrik.turn.completed")}${eol}${eol}`,
    // With CR alone a parser must see the next byte to know a line has ended (it could be CRLF).
    `: keep-alive${eol}${eol}`,
  ]);
  const deltas: string[] = [];
  expect(await follow(url, 2, deltas)).toEqual([1, 2]);
  expect(deltas).toEqual(["Hel", "lo"]);
});

test("a CRLF split between two chunks is one line end, not two", async () => {
  const { url } = await sseServer(() => [`id: 1\r\ndata: ${event(1)}\r`, `\n\r`, `\nid: 2\r\ndata: ${event(2)}\r\n\r\n`]);
  expect(await follow(url, 2)).toEqual([1, 2]);
});

test("after the stream ends, follow reconnects with Last-Event-ID of the last event", async () => {
  const { url, requests } = await sseServer(
    (_req, n) => (n === 1 ? [`id: 1\r\ndata: ${event(1)}\r\n\r\n`] : [`id: 2\r\ndata: ${event(2)}\r\n\r\n`]),
    true,
  );
  expect(await follow(url, 2)).toEqual([1, 2]);
  expect(requests.map((r) => r.headers["last-event-id"])).toEqual(["0", "1"]);
});

test("conversation and run go to the daemon as the stream's filters, again on a reconnect with Last-Event-ID", async () => {
  // The first connection ends after one event; the client connects again, from that event.
  let served = 0;
  const s = await sseServer(
    () => (++served === 1 ? [`event: event\ndata: ${event(4)}\nid: 4\n\n`] : [`event: event\ndata: ${event(5)}\nid: 5\n\n`]),
    true,
  );
  const client = new WardrikClient({ url: s.url, token: "t" });
  const controller = new AbortController();
  const seqs: number[] = [];
  for await (const e of client.follow("agt_1", { conversation: "c 1", run: "run_1", signal: controller.signal })) {
    seqs.push(e.seq);
    if (seqs.length === 2) break;
  }
  controller.abort();
  expect(seqs).toEqual([4, 5]);
  expect(s.requests.map((r) => [r.url, r.headers["last-event-id"]])).toEqual([
    ["/v1/agents/agt_1/events/stream?conversation=c+1&run=run_1", "0"],
    ["/v1/agents/agt_1/events/stream?conversation=c+1&run=run_1", "4"],
  ]);
});
