import { once } from "node:events";
import type { IncomingMessage } from "node:http";
import { afterEach, expect, test } from "vitest";
import WebSocket from "ws";
import { WORKER_PROTOCOL_VERSION } from "@wardrik/protocol";
import { callContext, spawnWorker, startDaemon, workerEnv, type TestDaemon, type WorkerProcess } from "./helpers.js";

// The WebSocket side: tokens, orgs, malformed messages, heartbeats, daemon restarts.
const daemons: TestDaemon[] = [];
let workers: WorkerProcess[] = [];
const sockets: WebSocket[] = [];

async function daemonFor(options: Parameters<typeof startDaemon>[0] = {}, port = 0): Promise<TestDaemon> {
  const d = await startDaemon(options, port);
  daemons.push(d);
  return d;
}

function spawn(daemon: TestDaemon, token = "token-a", name = "w1"): WorkerProcess {
  const worker = spawnWorker("tools-worker.ts", workerEnv(daemon, token, name));
  workers.push(worker);
  return worker;
}

/** A hand-driven worker connection, to send what the SDK never would. */
async function rawWorker(daemon: TestDaemon, token = "token-a"): Promise<{ ws: WebSocket; received: unknown[] }> {
  const ws = new WebSocket(`${daemon.url.replace("http", "ws")}/v1/workers`, { headers: { authorization: `Bearer ${token}` } });
  sockets.push(ws);
  ws.on("error", () => {});
  const received: unknown[] = [];
  ws.on("message", (data) => {
    const parsed = JSON.parse(data.toString()) as unknown;
    received.push(...(Array.isArray(parsed) ? parsed : [parsed]));
  });
  await once(ws, "open");
  return { ws, received };
}

function hello(ws: WebSocket, protocol = WORKER_PROTOCOL_VERSION): void {
  ws.send(JSON.stringify({ type: "hello", protocol, name: "raw", instance: "raw-1", sdk: "test" }));
}

afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  await Promise.all(workers.map((w) => w.stop()));
  workers = [];
  for (const d of daemons.splice(0)) await d.close();
});

test("a worker without a token, or with a wrong one, is refused with 401", async () => {
  const daemon = await daemonFor();
  for (const headers of [{}, { authorization: "Bearer nope" }]) {
    const ws = new WebSocket(`${daemon.url.replace("http", "ws")}/v1/workers`, { headers });
    ws.on("error", () => {});
    const [, res] = (await once(ws, "unexpected-response")) as [unknown, IncomingMessage];
    expect(res.statusCode).toBe(401);
    ws.terminate();
  }
});

test("a worker whose token is refused makes listen() reject with a clear message", async () => {
  const daemon = await daemonFor();
  const worker = spawn(daemon, "token-wrong");
  const failed = await worker.waitFor((e) => e.event === "listen_failed");
  expect(failed.message).toMatch(/^The daemon at ws:\/\/\S+ refused the worker token \(401/);
  expect(await worker.exited).toBe(1);
});

test("tools belong to their token's org: another org neither sees nor calls them", async () => {
  const daemon = await daemonFor();
  spawn(daemon, "token-b", "wb");
  expect(await daemon.gateway.waitForTool("org-b", "find_order", 20_000)).toBe(true);
  expect(daemon.gateway.list({ org: "org-a", agentId: "agt_a" })).toEqual([]);
  expect(await daemon.gateway.call("find_order", { payment_intent: "pi_1" }, callContext({ org: "org-a" }).ctx)).toMatchObject({
    ok: false,
    kind: "unavailable",
  });
  expect(await daemon.gateway.waitForTool("org-a", "find_order", 100)).toBe(false);
  const outcome = await daemon.gateway.call("echo_ctx", {}, callContext({ org: "org-b" }).ctx);
  expect(outcome).toMatchObject({ ok: true, output: { worker: "wb" } });
});

test.each([
  ["bad JSON", "{not json", "The message is not valid JSON"],
  [
    "a message that fails the schema",
    JSON.stringify({ type: "result", callId: 5, attempt: 1, ok: true }),
    'Malformed "result" message: callId',
  ],
  ["an unknown message type", JSON.stringify({ type: "launch" }), "Malformed"],
])("%s closes that connection only, with an error that says why", async (_label, frame, expected) => {
  const daemon = await daemonFor();
  spawn(daemon);
  expect(await daemon.gateway.waitForTool("org-a", "find_order", 20_000)).toBe(true);
  const { ws, received } = await rawWorker(daemon);
  hello(ws);
  await waitUntil(() => received.some((m) => (m as { type: string }).type === "welcome"));
  ws.send(frame);
  const [code, reason] = (await once(ws, "close")) as [number, Buffer];
  expect(code).toBe(1008);
  expect(reason.toString()).toContain(expected.slice(0, 20));
  expect(received).toContainEqual({ type: "error", code: "invalid_message", message: expect.stringContaining(expected) });
  // The real worker is untouched.
  expect(await daemon.gateway.call("find_order", { payment_intent: "pi_1" }, callContext().ctx)).toMatchObject({ ok: true });
});

test("a first message other than hello, and an unknown protocol version, are refused", async () => {
  const daemon = await daemonFor();
  const early = await rawWorker(daemon);
  early.ws.send(JSON.stringify({ type: "register", tools: [] }));
  const [earlyCode] = (await once(early.ws, "close")) as [number];
  expect(earlyCode).toBe(1008);
  expect(early.received).toContainEqual(expect.objectContaining({ type: "error", code: "hello_required" }));

  const future = await rawWorker(daemon);
  hello(future.ws, 99);
  const [futureCode] = (await once(future.ws, "close")) as [number];
  expect(futureCode).toBe(4000);
  expect(future.received).toContainEqual(expect.objectContaining({ type: "error", code: "unsupported_protocol" }));
});

test("the daemon skips tools with invalid names sent by a worker and says why", async () => {
  const daemon = await daemonFor();
  const { ws, received } = await rawWorker(daemon);
  hello(ws);
  const tool = { description: "d", inputSchema: { type: "object" }, readOnly: true, idempotent: false };
  ws.send(
    JSON.stringify({
      type: "register",
      tools: [
        { name: "ok_tool", ...tool },
        { name: "bad/name", ...tool },
        { name: "ok_tool", ...tool },
      ],
    }),
  );
  await waitUntil(() => received.some((m) => (m as { type: string }).type === "registered"));
  expect(received).toContainEqual({
    type: "registered",
    accepted: ["ok_tool"],
    skipped: [
      { name: "bad/name", reason: expect.stringContaining("invalid name") },
      { name: "ok_tool", reason: "registered twice by this worker" },
    ],
  });
  expect(daemon.gateway.list({ org: "org-a", agentId: "agt_a" }).map((t) => t.name)).toEqual(["workers/ok_tool"]);
});

test("a worker silent past the heartbeat timeout is dropped; a live one stays", async () => {
  const daemon = await daemonFor({ heartbeatIntervalMs: 50, heartbeatTimeoutMs: 300 });
  spawn(daemon);
  expect(await daemon.gateway.waitForTool("org-a", "find_order", 20_000)).toBe(true);
  const { ws } = await rawWorker(daemon);
  hello(ws);
  // ws answers protocol-level pings by itself, but never the gateway's JSON pings.
  const started = Date.now();
  await once(ws, "close");
  expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  expect(daemon.logs.some((l) => l.msg.includes("silent for too long"))).toBe(true);
  expect(await daemon.gateway.call("find_order", { payment_intent: "pi_1" }, callContext().ctx)).toMatchObject({ ok: true });
});

test("a result over the size limit fails the call with the sizes", async () => {
  const daemon = await daemonFor({ maxResultBytes: 60 });
  spawn(daemon);
  expect(await daemon.gateway.waitForTool("org-a", "echo_ctx", 20_000)).toBe(true);
  const outcome = await daemon.gateway.call("echo_ctx", { note: "x".repeat(100) }, callContext().ctx);
  expect(outcome).toMatchObject({ ok: false, kind: "failed", error: expect.stringMatching(/result is \d+ bytes; the limit is 60/) });
});

test("the daemon enforces the result size limit and forwards costs even from a worker that skips the SDK's checks", async () => {
  const daemon = await daemonFor({ maxResultBytes: 60 });
  const { ws, received } = await rawWorker(daemon);
  hello(ws);
  ws.send(
    JSON.stringify({
      type: "register",
      tools: [{ name: "big", description: "d", inputSchema: { type: "object" }, readOnly: true, idempotent: false }],
    }),
  );
  expect(await daemon.gateway.waitForTool("org-a", "big", 5000)).toBe(true);
  ws.on("message", () => {
    for (const m of received.splice(0) as { type: string; callId: string; attempt: number }[]) {
      if (m.type !== "call") continue;
      ws.send(
        JSON.stringify([
          { type: "cost", callId: m.callId, usd: 0.5 },
          { type: "result", callId: m.callId, attempt: m.attempt, ok: true, output: "y".repeat(100) },
        ]),
      );
    }
  });
  const { ctx, costs } = callContext();
  const outcome = await daemon.gateway.call("big", {}, ctx);
  expect(outcome).toEqual({
    ok: false,
    kind: "failed",
    error: "workers/big returned 102 bytes; the limit is 60. Return only what the model needs.",
  });
  expect(costs).toEqual([0.5]);
});

test("after the daemon restarts on the same port, the worker reconnects, re-registers and keeps serving", async () => {
  const first = await daemonFor();
  const worker = spawn(first);
  expect(await first.gateway.waitForTool("org-a", "find_order", 20_000)).toBe(true);
  expect(await first.gateway.call("find_order", { payment_intent: "pi_1" }, callContext().ctx)).toMatchObject({ ok: true });
  await first.close();
  daemons.splice(daemons.indexOf(first), 1);
  await worker.waitFor((e) => e.event === "warning" && String(e.message).includes("lost the connection"));
  const second = await daemonFor({}, first.port);
  expect(await second.gateway.waitForTool("org-a", "find_order", 20_000)).toBe(true);
  expect(await second.gateway.call("find_order", { payment_intent: "pi_2" }, callContext().ctx)).toEqual({
    ok: true,
    output: { id: "ord_1", payment_intent: "pi_2" },
  });
  expect(second.gateway.list({ org: "org-a", agentId: "agt_a" })).toHaveLength(8);
});

test("calls open when the gateway closes are settled as lost", async () => {
  const daemon = await daemonFor();
  const worker = spawn(daemon);
  expect(await daemon.gateway.waitForTool("org-a", "slow_write", 20_000)).toBe(true);
  const pending = daemon.gateway.call("slow_write", { tag: "g1", ms: 5000 }, callContext().ctx);
  await worker.waitFor((e) => e.event === "started" && e.tag === "g1");
  await daemon.gateway.close();
  expect(await pending).toEqual({ ok: false, kind: "lost", error: "This call may have run, but its answer was lost." });
});

async function waitUntil(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
