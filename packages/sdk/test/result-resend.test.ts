/**
 * A call that finishes while the worker has no connection keeps its result:
 * the SDK sends it, with the same callId and attempt, right after the next
 * welcome and registration, to the same daemon or the one that replaced it.
 * A dropped connection does not abort a running call.
 */
import { afterEach, expect, test } from "vitest";
import { z } from "zod";
import type { WorkerMessage } from "@wardrik/protocol";
import { Wardrik, type WardrikOptions } from "../src/index.js";
import { protocolServer, until, type ProtocolServer } from "./helpers/protocol-server.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function server(): Promise<ProtocolServer> {
  const s = await protocolServer();
  cleanups.push(() => s.stop());
  return s;
}

function worker(options: WardrikOptions): { wardrik: Wardrik; warnings: string[] } {
  const warnings: string[] = [];
  const wardrik = new Wardrik({
    onWarning: (m) => warnings.push(m),
    onInfo: () => undefined,
    reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
    ...options,
  });
  cleanups.push(() => wardrik.close());
  return { wardrik, warnings };
}

/** A tool whose calls finish when the test says so, reporting whether their signal aborted. */
function gatedTool(wardrik: Wardrik) {
  const gates = new Map<string, (value: unknown) => void>();
  const signals = new Map<string, AbortSignal>();
  wardrik.tool({
    name: "slow",
    input: z.object({ id: z.string() }),
    run: ({ id }, { signal, cost }) =>
      new Promise((resolve) => {
        signals.set(id, signal);
        gates.set(id, (value) => {
          cost(0.25);
          resolve(value);
        });
      }),
  });
  return { gates, signals };
}

const types = (messages: WorkerMessage[]) => messages.map((m) => m.type);

test("a result finished while the daemon is down goes to its successor right after hello and register, same callId and attempt", async () => {
  const daemon = await server();
  const waiting: number[] = [];
  const { wardrik, warnings } = worker({ url: daemon.url, token: "t", onReconnect: (r) => waiting.push(r.waiting) });
  const { gates, signals } = gatedTool(wardrik);
  const listening = wardrik.listen();
  await until(() => daemon.connections[0]?.received.some((m) => m.type === "register") ?? false, "register");
  daemon.connections[0]!.call({ callId: "call_1", attempt: 2, tool: "slow", args: { id: "a" } });
  await until(() => gates.has("a"), "the call to start");

  // The daemon goes away (a restart): the call keeps running, its signal untouched.
  await daemon.stop(1001);
  await until(() => warnings.some((w) => w.includes("lost the connection")), "the worker to notice");
  expect(signals.get("a")!.aborted).toBe(false);

  gates.get("a")!({ refunded: "a" });
  await until(() => waiting.includes(2), "the result and its cost to wait for a connection");

  await daemon.start();
  await until(() => daemon.connections[1]?.received.some((m) => m.type === "result") ?? false, "the result on the new connection");
  const received = daemon.connections[1]!.received;
  expect(types(received)).toEqual(["hello", "register", "cost", "result"]);
  expect(received[2]).toEqual({ type: "cost", callId: "call_1", usd: 0.25 });
  expect(received[3]).toEqual({ type: "result", callId: "call_1", attempt: 2, ok: true, output: { refunded: "a" } });
  expect(daemon.invalid).toEqual([]);
  // Sent once: nothing went to the old connection.
  expect(types(daemon.connections[0]!.received)).toEqual(["hello", "register"]);

  await wardrik.close();
  await listening;
});

test("a dropped connection (no close frame) keeps the call running; its failure is resent too", async () => {
  const daemon = await server();
  const { wardrik } = worker({ url: daemon.url, token: "t" });
  wardrik.tool({
    name: "fails_later",
    input: z.object({}),
    run: async (_args, { signal }) => {
      await new Promise((r) => setTimeout(r, 300));
      if (signal.aborted) return "aborted";
      throw new Error("No order ord_9. Order IDs look like ord_1234.");
    },
  });
  const listening = wardrik.listen();
  await until(() => daemon.connections[0]?.received.some((m) => m.type === "register") ?? false, "register");
  daemon.connections[0]!.call({ callId: "call_7", tool: "fails_later" });
  await new Promise((r) => setTimeout(r, 50));
  daemon.connections[0]!.ws.terminate();
  await until(() => daemon.connections[1]?.received.some((m) => m.type === "result") ?? false, "the result after the reconnect");
  expect(daemon.connections[1]!.received.find((m) => m.type === "result")).toEqual({
    type: "result",
    callId: "call_7",
    attempt: 1,
    ok: false,
    error: "No order ord_9. Order IDs look like ord_1234.",
  });
  await wardrik.close();
  await listening;
});

test("only the daemon's abort stops a call: its answer is then not resent", async () => {
  const daemon = await server();
  const { wardrik } = worker({ url: daemon.url, token: "t" });
  const { gates, signals } = gatedTool(wardrik);
  const listening = wardrik.listen();
  await until(() => daemon.connections[0]?.received.some((m) => m.type === "register") ?? false, "register");
  daemon.connections[0]!.call({ callId: "call_k", tool: "slow", args: { id: "k" } });
  await until(() => gates.has("k"), "the call to start");
  daemon.connections[0]!.ws.terminate();
  await until(() => daemon.connections[1]?.received.some((m) => m.type === "register") ?? false, "the reconnect");
  expect(signals.get("k")!.aborted).toBe(false);
  // The successor knows the call and stops it.
  daemon.connections[1]!.send({ type: "abort", callId: "call_k", reason: "killed" });
  await until(() => signals.get("k")!.aborted, "the abort");
  expect((signals.get("k")!.reason as Error).message).toBe("The call was killed.");
  gates.get("k")!("late");
  await new Promise((r) => setTimeout(r, 100));
  expect(daemon.connections.flatMap((c) => c.received).some((m) => m.type === "result")).toBe(false);
  await wardrik.close();
  await listening;
});

async function retryDelays(closeCode: number): Promise<number[]> {
  const daemon = await server();
  const delays: number[] = [];
  const { wardrik } = worker({
    url: daemon.url,
    token: "t",
    reconnect: { initialDelayMs: 50, maxDelayMs: 10_000, restartDelayMs: 100 },
    onReconnect: (info) => delays.push(info.delayMs / 1000),
  });
  wardrik.tool({ name: "a", input: z.object({}), run: () => "a" });
  const listening = wardrik.listen();
  await until(() => daemon.connections[0]?.received.some((m) => m.type === "register") ?? false, "register");
  await daemon.stop(closeCode);
  await until(() => delays.length >= 6, "six failed attempts", 15_000);
  await daemon.start();
  await until(() => daemon.connections[1]?.received.some((m) => m.type === "register") ?? false, "the reconnect", 15_000);
  await wardrik.close();
  await listening;
  return delays;
}

test("after the daemon says it is going away (1001), reconnect delays stay short, so calls resume soon after its restart", async () => {
  const delays = await retryDelays(1001);
  expect(delays.length).toBeGreaterThanOrEqual(6);
  expect(Math.max(...delays)).toBeLessThanOrEqual(0.1);
});

test("after any other close, reconnect delays grow", async () => {
  const delays = await retryDelays(1011);
  expect(delays.length).toBeGreaterThanOrEqual(6);
  expect(Math.max(...delays)).toBeGreaterThan(0.1);
});

test("close() while connected waits for the running call and sends its result", async () => {
  const daemon = await server();
  const { wardrik } = worker({ url: daemon.url, token: "t" });
  const { gates, signals } = gatedTool(wardrik);
  const listening = wardrik.listen();
  await until(() => daemon.connections[0]?.received.some((m) => m.type === "register") ?? false, "register");
  daemon.connections[0]!.call({ callId: "call_c", tool: "slow", args: { id: "c" } });
  await until(() => gates.has("c"), "the call to start");
  const closed = wardrik.close();
  await until(() => daemon.connections[0]!.received.some((m) => m.type === "drain"), "the drain");
  gates.get("c")!("done");
  await closed;
  await listening;
  expect(signals.get("c")!.aborted).toBe(false);
  expect(daemon.connections[0]!.received.find((m) => m.type === "result")).toMatchObject({ callId: "call_c", ok: true, output: "done" });
});

test("close() while disconnected aborts the running calls: no daemon would hear their answers", async () => {
  const daemon = await server();
  const { wardrik, warnings } = worker({ url: daemon.url, token: "t" });
  const { gates, signals } = gatedTool(wardrik);
  const listening = wardrik.listen();
  await until(() => daemon.connections[0]?.received.some((m) => m.type === "register") ?? false, "register");
  daemon.connections[0]!.call({ callId: "call_d", tool: "slow", args: { id: "d" } });
  await until(() => gates.has("d"), "the call to start");
  await daemon.stop(1001);
  await until(() => warnings.some((w) => w.includes("lost the connection")), "the worker to notice");
  await wardrik.close();
  await listening;
  expect(signals.get("d")!.aborted).toBe(true);
  expect((signals.get("d")!.reason as Error).message).toBe("The worker closed before the call finished.");
});

test("a call sent again after it finished here (the daemon lost its answer) gets the result it had, without running twice", async () => {
  const daemon = await server();
  const { wardrik, warnings } = worker({ url: daemon.url, token: "t" });
  let runs = 0;
  wardrik.tool({
    name: "charge",
    input: z.object({ cents: z.number() }),
    run: async ({ cents }) => {
      runs += 1;
      await new Promise((r) => setTimeout(r, 20));
      return { charged: cents, run: runs };
    },
  });
  const listening = wardrik.listen();
  await until(() => daemon.connections[0]?.received.some((m) => m.type === "register") ?? false, "register");
  const conn = daemon.connections[0]!;
  conn.call({ callId: "call_x", tool: "charge", args: { cents: 500 } });
  await until(() => conn.received.some((m) => m.type === "result"), "the first result");
  // As after a restart that lost the stored answer: the same call again, a later attempt (a retry, or a person's approval).
  conn.call({ callId: "call_x", attempt: 2, tool: "charge", args: { cents: 500 } });
  await until(() => conn.received.filter((m) => m.type === "result").length === 2, "the second answer");
  const results = conn.received.filter((m) => m.type === "result");
  expect(results).toEqual([
    { type: "result", callId: "call_x", attempt: 1, ok: true, output: { charged: 500, run: 1 } },
    { type: "result", callId: "call_x", attempt: 2, ok: true, output: { charged: 500, run: 1 } },
  ]);
  expect(runs).toBe(1);
  expect(warnings.some((w) => w.includes("call_x came again (attempt 2) after it finished here"))).toBe(true);
  // Another call of the same tool runs as usual.
  conn.call({ callId: "call_y", tool: "charge", args: { cents: 1 } });
  await until(() => conn.received.filter((m) => m.type === "result").length === 3, "the other call");
  expect(runs).toBe(2);
  await wardrik.close();
  await listening;
});
