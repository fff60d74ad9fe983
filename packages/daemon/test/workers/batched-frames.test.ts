import { once } from "node:events";
import { afterEach, expect, test } from "vitest";
import WebSocket from "ws";
import { DaemonCall, WORKER_PROTOCOL_VERSION } from "@wardrik/protocol";
import { callContext, startDaemon, type TestDaemon } from "./helpers.js";

// Frames that carry several messages (a JSON array), as the SDK sends them under load: each message
// counts on its own, and one malformed message does not take the others of its frame down with it.
let daemon: TestDaemon | undefined;
const sockets: WebSocket[] = [];

afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  await daemon?.close();
  daemon = undefined;
});

interface Message {
  type: string;
  [key: string]: unknown;
}

/** A hand-driven worker of `echo` that greets and registers in one frame, and answers as the test says. */
async function batchingWorker(d: TestDaemon): Promise<{ ws: WebSocket; received: Message[]; calls(): DaemonCall[] }> {
  const ws = new WebSocket(`${d.url.replace("http", "ws")}/v1/workers`, { headers: { authorization: "Bearer token-a" } });
  sockets.push(ws);
  ws.on("error", () => {});
  const received: Message[] = [];
  ws.on("message", (data) => {
    const parsed = JSON.parse(String(data)) as Message | Message[];
    received.push(...(Array.isArray(parsed) ? parsed : [parsed]));
  });
  await once(ws, "open");
  const tool = { name: "echo", description: "d", inputSchema: { type: "object" }, readOnly: true, idempotent: false };
  ws.send(
    JSON.stringify([
      { type: "hello", protocol: WORKER_PROTOCOL_VERSION, name: "batcher", instance: "batcher-1", sdk: "test" },
      { type: "register", tools: [tool] },
    ]),
  );
  await waitUntil(() => received.some((m) => m.type === "registered"));
  return { ws, received, calls: () => received.filter((m) => m.type === "call") as unknown as DaemonCall[] };
}

function resultOf(call: DaemonCall): Message {
  return { type: "result", callId: call.callId, attempt: call.attempt, ok: true, output: call.args };
}

test("the results of several calls in one frame answer each call with its own output", async () => {
  daemon = await startDaemon();
  const worker = await batchingWorker(daemon);
  const outcomes = [1, 2, 3].map((n) => daemon!.gateway.call("echo", { n }, callContext().ctx));
  await waitUntil(() => worker.calls().length === 3);
  // Answered out of order, in one frame.
  const [a, b, c] = worker.calls() as [DaemonCall, DaemonCall, DaemonCall];
  worker.ws.send(JSON.stringify([resultOf(c), resultOf(a), resultOf(b)]));
  const answers = await Promise.all(outcomes);
  expect(answers).toMatchObject([1, 2, 3].map((n) => ({ ok: true, output: { n } })));
});

test("a malformed message in a frame closes the connection with its reason, after the frame's well-formed messages", async () => {
  daemon = await startDaemon({ reconnectGraceMs: 200 });
  const worker = await batchingWorker(daemon);
  const [first, second, third] = [1, 2, 3].map((n) => daemon!.gateway.call("echo", { n }, callContext().ctx));
  await waitUntil(() => worker.calls().length === 3);
  const [a, b, c] = worker.calls() as [DaemonCall, DaemonCall, DaemonCall];
  const closed = once(worker.ws, "close");
  worker.ws.send(JSON.stringify([resultOf(a), { ...resultOf(b), attempt: "one" }, resultOf(c)]));
  const [code] = (await closed) as [number];
  expect(code).toBe(1008);
  expect(worker.received).toContainEqual({
    type: "error",
    code: "invalid_message",
    message: expect.stringContaining(`Malformed "result" message (item 2 of the 3 in its frame): attempt: `),
  });
  // The answers before and after the malformed one both count.
  expect(await first).toMatchObject({ ok: true, output: { n: 1 } });
  expect(await third).toMatchObject({ ok: true, output: { n: 3 } });
  // The malformed one answered nothing: its call waits out the grace for its worker, then is lost.
  expect(await second).toMatchObject({ ok: false, kind: "lost" });
});

test("a malformed greeting in a frame closes the connection with its own reason: nothing after it in the frame is taken", async () => {
  daemon = await startDaemon();
  const ws = new WebSocket(`${daemon.url.replace("http", "ws")}/v1/workers`, { headers: { authorization: "Bearer token-a" } });
  sockets.push(ws);
  ws.on("error", () => {});
  const received: Message[] = [];
  ws.on("message", (data) => received.push(JSON.parse(String(data)) as Message));
  await once(ws, "open");
  const closed = once(ws, "close");
  const tool = { name: "echo", description: "d", inputSchema: { type: "object" }, readOnly: true, idempotent: false };
  const hello = { type: "hello", protocol: WORKER_PROTOCOL_VERSION, name: "batcher", instance: "batcher-1", sdk: "test" };
  ws.send(JSON.stringify([{ ...hello, name: 7 }, hello, { type: "register", tools: [tool] }]));
  const [code] = (await closed) as [number];
  expect(code).toBe(1008);
  expect(received).toEqual([
    {
      type: "error",
      code: "invalid_message",
      message: expect.stringContaining(`Malformed "hello" message (item 1 of the 3 in its frame): name: `),
    },
  ]);
  // The well-formed greeting and registration after it were not taken: no worker serves echo.
  expect(daemon.gateway.list({ org: "org-a" }).map((t) => t.name)).toEqual([]);
});

test("a call leaves as exactly the DaemonCall the schema describes, with or without trace context", async () => {
  daemon = await startDaemon();
  const worker = await batchingWorker(daemon);
  const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  const odd = { text: 'quotes " and \\ backslashes, \u2028 a line separator, emoji 😀', list: [null, 1.5, -0, true] };
  const plain = callContext({ timeoutMs: 1234 }).ctx;
  const traced = callContext({ traceparent, callId: 'call_"quoted"\\', timeoutMs: 2 ** 40 }).ctx;
  const outcomes = [daemon.gateway.call("echo", odd, plain), daemon.gateway.call("echo", undefined, traced)];
  await waitUntil(() => worker.calls().length === 2);
  const [first, second] = worker.calls();
  const ctxOf = (ctx: typeof plain, timeoutMs: number) => ({
    agent: ctx.agent,
    run: ctx.run,
    idempotencyKey: ctx.idempotencyKey,
    timeoutMs,
  });
  expect(first).toEqual({
    type: "call",
    callId: plain.callId,
    attempt: 1,
    tool: "echo",
    args: JSON.parse(JSON.stringify(odd)),
    ctx: ctxOf(plain, 1234),
  });
  // No arguments go as {}; a timeout past what a timer holds is capped.
  expect(second).toEqual({
    type: "call",
    callId: traced.callId,
    attempt: 1,
    tool: "echo",
    args: {},
    ctx: { ...ctxOf(traced, 2 ** 31 - 1), traceparent },
  });
  for (const call of [first, second]) expect(DaemonCall.strict().safeParse(call).success).toBe(true);
  worker.ws.send(JSON.stringify(worker.calls().map(resultOf)));
  expect(await Promise.all(outcomes)).toMatchObject([{ ok: true }, { ok: true }]);
});

async function waitUntil(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
