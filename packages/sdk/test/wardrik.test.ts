import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, test } from "vitest";
import { WebSocketServer, type WebSocket } from "ws";
import { z } from "zod";
import { Wardrik } from "../src/index.js";

// A scripted daemon: enough of the worker protocol to watch what the SDK sends.
interface FakeDaemon {
  url: string;
  connections: { ws: WebSocket; req: IncomingMessage; received: Record<string, unknown>[] }[];
  server: Server;
  close(): Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function fakeDaemon(status?: number): Promise<FakeDaemon> {
  const server = createServer();
  const wss = new WebSocketServer({ noServer: true });
  const connections: FakeDaemon["connections"] = [];
  server.on("upgrade", (req, socket, head) => {
    if (status) {
      socket.end(
        `HTTP/1.1 ${status} Nope\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{"error":{"code":"x","message":"go away"}}`,
      );
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const conn = { ws, req, received: [] as Record<string, unknown>[] };
      connections.push(conn);
      ws.on("message", (data) => {
        const parsed = JSON.parse(data.toString()) as Record<string, unknown> | Record<string, unknown>[];
        for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
          conn.received.push(m);
          if (m.type === "hello")
            ws.send(
              JSON.stringify({ type: "welcome", protocol: 1, workerId: "wkr_1", org: "o", heartbeatMs: 10_000, maxResultBytes: 1_000_000 }),
            );
          if (m.type === "drain") ws.send(JSON.stringify({ type: "draining" }));
        }
      });
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const daemon: FakeDaemon = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections,
    server,
    async close() {
      for (const c of connections) c.ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  cleanups.push(() => daemon.close());
  return daemon;
}

function worker(options: ConstructorParameters<typeof Wardrik>[0] = {}): { wardrik: Wardrik; warnings: string[] } {
  const warnings: string[] = [];
  const wardrik = new Wardrik({
    onWarning: (m) => warnings.push(m),
    onInfo: () => undefined,
    reconnect: { initialDelayMs: 20, maxDelayMs: 100 },
    ...options,
  });
  cleanups.push(() => wardrik.close());
  return { wardrik, warnings };
}

async function waitUntil(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}

test("listen() needs a URL and a token", async () => {
  const saved = { url: process.env.WARDRIK_URL, token: process.env.WARDRIK_TOKEN };
  delete process.env.WARDRIK_URL;
  delete process.env.WARDRIK_TOKEN;
  try {
    await expect(new Wardrik({ token: "t" }).listen()).rejects.toThrow("pass { url } or set WARDRIK_URL");
    await expect(new Wardrik({ url: "http://127.0.0.1:1" }).listen()).rejects.toThrow("pass { token } or set WARDRIK_TOKEN");
  } finally {
    if (saved.url !== undefined) process.env.WARDRIK_URL = saved.url;
    if (saved.token !== undefined) process.env.WARDRIK_TOKEN = saved.token;
  }
});

test("URL and token default to WARDRIK_URL and WARDRIK_TOKEN; hello, then the tools", async () => {
  const daemon = await fakeDaemon();
  process.env.WARDRIK_URL = daemon.url;
  process.env.WARDRIK_TOKEN = "tok_env";
  const { wardrik } = worker({ name: "billing" });
  delete process.env.WARDRIK_URL;
  delete process.env.WARDRIK_TOKEN;
  wardrik.tool({ name: "a", description: "A", input: z.object({ x: z.string().describe("the x") }), readOnly: true, run: () => "a" });
  const listening = wardrik.listen();
  await waitUntil(() => daemon.connections[0]?.received.some((m) => m.type === "register") ?? false);
  const conn = daemon.connections[0]!;
  expect(conn.req.url).toBe("/v1/workers");
  expect(conn.req.headers.authorization).toBe("Bearer tok_env");
  expect(conn.received[0]).toMatchObject({
    type: "hello",
    protocol: 1,
    name: "billing",
    // The SDK's own version, read from its package.json.
    sdk: (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version,
    instance: expect.any(String),
  });
  expect(conn.received[1]).toEqual({
    type: "register",
    tools: [
      {
        name: "a",
        description: "A",
        inputSchema: { type: "object", properties: { x: { type: "string", description: "the x" } }, required: ["x"] },
        readOnly: true,
        idempotent: false,
      },
    ],
  });
  // A tool added while listening is registered at once.
  wardrik.tool({ name: "b", description: "B", input: z.object({}), run: () => "b" });
  await waitUntil(() => conn.received.filter((m) => m.type === "register").length === 2);
  expect((conn.received.at(-1)!.tools as { name: string }[]).map((t) => t.name)).toEqual(["a", "b"]);
  await wardrik.close();
  await listening;
});

test("a duplicate name is skipped with a warning", () => {
  const { wardrik, warnings } = worker({ url: "http://x", token: "t" });
  wardrik.tool({ name: "a", description: "A", input: z.object({}), run: () => "a" });
  wardrik.tool({ name: "a", description: "A2", input: z.object({}), run: () => "a" });
  expect(warnings).toEqual(['Wardrik: skipped tool "a": a tool with this name is already registered on this worker.']);
});

test("an abort message aborts ctx.signal; the answer is not sent", async () => {
  const daemon = await fakeDaemon();
  const { wardrik } = worker({ url: daemon.url, token: "t" });
  let reason: unknown;
  wardrik.tool({
    name: "wait",
    description: "w",
    input: z.object({}),
    run: (_args, { signal }) =>
      new Promise((resolve) =>
        signal.addEventListener("abort", () => {
          reason = signal.reason;
          resolve("late");
        }),
      ),
  });
  const listening = wardrik.listen();
  await waitUntil(() => daemon.connections[0]?.received.some((m) => m.type === "register") ?? false);
  const conn = daemon.connections[0]!;
  const ctx = { agent: "agt_1", run: "run_1", idempotencyKey: "k", timeoutMs: 10_000 };
  conn.ws.send(JSON.stringify({ type: "call", callId: "call_1", attempt: 1, tool: "wait", args: {}, ctx }));
  await new Promise((r) => setTimeout(r, 50));
  conn.ws.send(JSON.stringify({ type: "abort", callId: "call_1", reason: "killed" }));
  await waitUntil(() => reason !== undefined);
  expect((reason as Error).message).toBe("The call was killed.");
  await new Promise((r) => setTimeout(r, 50));
  expect(conn.received.some((m) => m.type === "result")).toBe(false);
  await wardrik.close();
  await listening;
});

test("a tool's ctx holds its fields as its own: a spread copy keeps agent, run, idempotencyKey, traceparent, signal and cost", async () => {
  const daemon = await fakeDaemon();
  const { wardrik } = worker({ url: daemon.url, token: "t" });
  let keys: string[] = [];
  let copy: Record<string, unknown> = {};
  wardrik.tool({
    name: "look",
    description: "l",
    input: z.object({}),
    run: (_args, ctx) => {
      keys = Object.keys(ctx);
      copy = { ...ctx };
      return "seen";
    },
  });
  const listening = wardrik.listen();
  await waitUntil(() => daemon.connections[0]?.received.some((m) => m.type === "register") ?? false);
  const conn = daemon.connections[0]!;
  const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  const ctx = { agent: "agt_1", run: "run_1", idempotencyKey: "k", timeoutMs: 10_000, traceparent };
  conn.ws.send(JSON.stringify({ type: "call", callId: "call_1", attempt: 1, tool: "look", args: {}, ctx }));
  await waitUntil(() => conn.received.some((m) => m.type === "result"));
  expect(keys.sort()).toEqual(["agent", "cost", "idempotencyKey", "run", "signal", "traceparent"]);
  expect(copy).toMatchObject({ agent: "agt_1", run: "run_1", idempotencyKey: "k", traceparent });
  expect(copy.signal).toBeInstanceOf(AbortSignal);
  expect((copy.signal as AbortSignal).aborted).toBe(false);
  expect(typeof copy.cost).toBe("function");
  expect(conn.received.find((m) => m.type === "result")).toMatchObject({ callId: "call_1", ok: true, output: "seen" });
  await wardrik.close();
  await listening;
});

test("when the connection drops, the worker reconnects with backoff and registers again", async () => {
  const daemon = await fakeDaemon();
  const { wardrik, warnings } = worker({ url: daemon.url, token: "t" });
  wardrik.tool({ name: "a", description: "A", input: z.object({}), run: () => "a" });
  const listening = wardrik.listen();
  await waitUntil(() => daemon.connections[0]?.received.some((m) => m.type === "register") ?? false);
  daemon.connections[0]!.ws.terminate();
  await waitUntil(() => daemon.connections[1]?.received.some((m) => m.type === "register") ?? false);
  expect(daemon.connections[1]!.received[0]!.instance).toBe(daemon.connections[0]!.received[0]!.instance);
  expect(warnings.some((w) => w.includes("lost the connection"))).toBe(true);
  await wardrik.close();
  await listening;
});

test("a URL that is not a worker endpoint makes listen() reject", async () => {
  const daemon = await fakeDaemon(404);
  const { wardrik } = worker({ url: daemon.url, token: "t" });
  await expect(wardrik.listen()).rejects.toThrow("is not a Wardrik worker endpoint (404)");
});

test("close() before listen() and twice is harmless", async () => {
  const { wardrik } = worker({ url: "http://127.0.0.1:1", token: "t" });
  await wardrik.close();
  await wardrik.close();
  await wardrik.listen();
});
