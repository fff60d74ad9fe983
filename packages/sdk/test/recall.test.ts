/**
 * The worker's side of `recall`: a daemon that lost a call's answer asks
 * whether this worker knows the call's idempotency key. It answers "running"
 * while it runs the call (and while the result is being remembered),
 * "finished" with the result it gave after, "unknown" otherwise; with a
 * file-backed store, a new worker process answers for the one before it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { z } from "zod";
import type { WorkerMessage } from "@wardrik/protocol";
import { FileFinishedCalls, Wardrik, type FinishedCallRecord, type FinishedCallStore, type WardrikOptions } from "../src/index.js";
import { CALL_CTX, protocolServer, until, type ProtocolConnection } from "./helpers/protocol-server.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function connected(options: Partial<WardrikOptions> = {}) {
  const daemon = await protocolServer();
  cleanups.push(() => daemon.stop());
  const warnings: string[] = [];
  const wardrik = new Wardrik({ url: daemon.url, token: "t", onWarning: (m) => warnings.push(m), ...options });
  cleanups.push(() => wardrik.close());
  const gates = new Map<string, () => void>();
  let runs = 0;
  wardrik.tool({
    name: "charge",
    input: z.object({ id: z.string(), fail: z.boolean().optional() }),
    run: ({ id, fail }) =>
      new Promise((resolve, reject) => {
        runs += 1;
        gates.set(id, () => (fail ? reject(new Error(`card declined for ${id}`)) : resolve({ charged: id })));
      }),
  });
  void wardrik.listen();
  await until(() => daemon.connections.at(-1)?.received.some((m) => m.type === "register") ?? false, "register");
  return { daemon, conn: daemon.connections.at(-1)!, wardrik, gates, warnings, runs: () => runs };
}

let asks = 0;
async function ask(conn: ProtocolConnection, key: string, callId = key): Promise<WorkerMessage> {
  const id = `ask_${++asks}`;
  conn.send({ type: "recall", ask: id, callId, idempotencyKey: key });
  await until(() => conn.received.some((m) => m.type === "recalled" && m.ask === id), `the answer to ${id}`);
  return conn.received.find((m) => m.type === "recalled" && m.ask === id)!;
}

const call = (conn: ProtocolConnection, id: string, attempt = 1, args: Record<string, unknown> = {}) =>
  conn.call({ callId: id, attempt, tool: "charge", args: { id, ...args }, ctx: { ...CALL_CTX, idempotencyKey: id } });

test("unknown, then running while it runs, then finished with the result it gave", async () => {
  const { conn, gates } = await connected();
  expect(await ask(conn, "call_a")).toEqual({ type: "recalled", ask: expect.any(String), callId: "call_a", state: "unknown" });
  call(conn, "call_a", 3);
  await until(() => gates.has("call_a"), "the call to start");
  expect(await ask(conn, "call_a")).toMatchObject({ state: "running", attempt: 3 });
  gates.get("call_a")!();
  await until(() => conn.received.some((m) => m.type === "result"), "the result");
  expect(await ask(conn, "call_a")).toMatchObject({ state: "finished", attempt: 3, ok: true, output: { charged: "call_a" } });
});

test("a failed run is remembered as the failure it was", async () => {
  const { conn, gates } = await connected();
  call(conn, "call_f", 1, { fail: true });
  await until(() => gates.has("call_f"), "the call to start");
  gates.get("call_f")!();
  await until(() => conn.received.some((m) => m.type === "result"), "the result");
  expect(await ask(conn, "call_f")).toMatchObject({ state: "finished", attempt: 1, ok: false, error: "card declined for call_f" });
});

test("the result leaves only once the store has it; asked meanwhile, the worker says it is still running", async () => {
  let release: () => void = () => undefined;
  const stored: FinishedCallRecord[] = [];
  const slowStore: FinishedCallStore = {
    get: (key) => stored.find((r) => r.key === key),
    put: (r) =>
      new Promise<void>((resolve) => {
        release = () => {
          stored.push(r);
          resolve();
        };
      }),
  };
  const { conn, gates } = await connected({ finishedCalls: slowStore });
  call(conn, "call_s");
  await until(() => gates.has("call_s"), "the call to start");
  gates.get("call_s")!();
  expect(await ask(conn, "call_s")).toMatchObject({ state: "running", attempt: 1 });
  expect(conn.received.some((m) => m.type === "result")).toBe(false);
  release();
  await until(() => conn.received.some((m) => m.type === "result"), "the result");
  expect(await ask(conn, "call_s")).toMatchObject({ state: "finished", output: { charged: "call_s" } });
});

test("a store that cannot write is reported, and the result is sent anyway", async () => {
  const failing: FinishedCallStore = { get: () => undefined, put: () => Promise.reject(new Error("disk full")) };
  const { conn, gates, warnings } = await connected({ finishedCalls: failing });
  call(conn, "call_d");
  await until(() => gates.has("call_d"), "the call to start");
  gates.get("call_d")!();
  await until(() => conn.received.some((m) => m.type === "result"), "the result");
  expect(warnings.some((w) => w.includes("could not remember charge call call_d as finished (disk full)"))).toBe(true);
});

test("with a file-backed store, a new worker process answers for calls the one before it finished, and does not run them again", async () => {
  const dir = mkdtempSync(join(tmpdir(), "wardrik-recall-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "finished.jsonl");
  const first = await connected({ finishedCalls: new FileFinishedCalls(file) });
  call(first.conn, "call_p", 2);
  await until(() => first.gates.has("call_p"), "the call to start");
  first.gates.get("call_p")!();
  await until(() => first.conn.received.some((m) => m.type === "result"), "the result");
  await first.wardrik.close();

  const second = await connected({ finishedCalls: new FileFinishedCalls(file) });
  expect(await ask(second.conn, "call_p")).toMatchObject({ state: "finished", attempt: 2, ok: true, output: { charged: "call_p" } });
  // The daemon sends the call again (a person approved a re-run): answered from the file, not run.
  call(second.conn, "call_p", 3);
  await until(() => second.conn.received.some((m) => m.type === "result"), "the answer");
  expect(second.conn.received.filter((m) => m.type === "result")).toEqual([
    { type: "result", callId: "call_p", attempt: 3, ok: true, output: { charged: "call_p" } },
  ]);
  expect(second.runs()).toBe(0);
});
