/**
 * What a worker says about its connection: a line when it connects (with the
 * tools the daemon took), one when the link goes, none per retry while the
 * daemon stays down (a reminder every 30 s), one when it is back; and a
 * refused token said once, with its hint once.
 */
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, test } from "vitest";
import { z } from "zod";
import { WardrikError } from "@wardrik/protocol";
import { Wardrik, type ReconnectInfo, type WardrikOptions } from "../src/index.js";
import { ConnectionReport, STILL_TRYING_EVERY_MS } from "../src/connection-report.js";
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

function worker(options: WardrikOptions): { wardrik: Wardrik; said: string[]; retries: ReconnectInfo[] } {
  const said: string[] = [];
  const retries: ReconnectInfo[] = [];
  const wardrik = new Wardrik({
    name: "w-test",
    onWarning: (m) => said.push(`warn: ${m}`),
    onInfo: (m) => said.push(`info: ${m}`),
    onReconnect: (r) => retries.push(r),
    reconnect: { initialDelayMs: 10, maxDelayMs: 40, restartDelayMs: 20 },
    ...options,
  });
  cleanups.push(() => wardrik.close());
  wardrik.tool({ name: "find_order", input: z.object({ id: z.string() }), readOnly: true, run: ({ id }) => id });
  wardrik.tool({ name: "refund_order", input: z.object({ id: z.string() }), run: ({ id }) => id });
  return { wardrik, said, retries };
}

test("a worker says once that it connected, as which worker and serving which tools", async () => {
  const daemon = await server();
  const { wardrik, said } = worker({ url: daemon.url, token: "t" });
  const listening = wardrik.listen();
  await until(() => said.length > 0, "the connected line");
  expect(said).toEqual([
    expect.stringMatching(
      /^info: Wardrik: worker w-test connected to ws:\/\/127\.0\.0\.1:\d+\/v1\/workers; serving find_order, refund_order\.$/,
    ),
  ]);
  await wardrik.close();
  await listening;
});

test("while the daemon is down the worker retries quietly: one line when the link goes, one when it is back", async () => {
  const daemon = await server();
  const { wardrik, said, retries } = worker({ url: daemon.url, token: "t" });
  const listening = wardrik.listen();
  await until(() => daemon.connections[0]?.received.some((m) => m.type === "register") ?? false, "register");
  await daemon.stop(1001);
  // Many attempts fail (the issue counted 85 lines in 76 s); none of them is a line of its own.
  await until(() => retries.length >= 20, "twenty failed attempts", 15_000);
  const warnings = said.filter((s) => s.startsWith("warn: "));
  // One line for the loss, never a line per attempt.
  expect(warnings).toHaveLength(1);
  expect(said.filter((s) => s.includes("reconnected"))).toEqual([]);
  for (const w of warnings) expect(w).toMatch(/^warn: Wardrik: lost the connection to ws:\/\/\S+ \(.+\); reconnecting\. Calls resume/);
  await daemon.start();
  await until(() => said.some((s) => s.includes("reconnected")), "the reconnected line", 15_000);
  expect(said.at(-1)).toMatch(/^info: Wardrik: reconnected to ws:\/\/\S+ after \d+ s; serving find_order, refund_order\.$/);
  expect(said.filter((s) => s.startsWith("warn: "))).toHaveLength(warnings.length);
  await wardrik.close();
  await listening;
});

test("a daemon that cannot be reached at all: one line with a hint, then a reminder every 30 s of attempts", () => {
  let now = 0;
  const said: string[] = [];
  const report = new ConnectionReport({ info: (m) => said.push(m), warn: (m) => said.push(m) }, () => now);
  const url = "ws://127.0.0.1:7373/v1/workers";
  // 85 failed attempts over 76 s, as the issue saw.
  for (let i = 0; i < 85; i++) {
    report.ended(url, false, { url, attempt: i + 1, delayMs: 900, reason: "connect ECONNREFUSED 127.0.0.1:7373", waiting: 0 });
    now += 900;
  }
  expect(said[0]).toBe(
    "Wardrik: could not connect to ws://127.0.0.1:7373/v1/workers (connect ECONNREFUSED 127.0.0.1:7373); retrying in the background. Is `wardrik daemon` running, and is WARDRIK_URL its address?",
  );
  expect(said.slice(1)).toEqual([
    expect.stringMatching(/^Wardrik: still cannot reach \S+ after \d+ attempts in \d+ s \(connect ECONNREFUSED/),
    expect.stringMatching(/^Wardrik: still cannot reach \S+ after \d+ attempts in \d+ s /),
  ]);
  expect(STILL_TRYING_EVERY_MS).toBe(30_000);
  report.registered(url, "w", ["a"], true);
  expect(said.at(-1)).toBe("Wardrik: worker w connected to ws://127.0.0.1:7373/v1/workers; serving a.");
});

test("a refused token rejects listen() with one message that gives the hint once", async () => {
  const http = createServer();
  http.on("upgrade", (_req, socket) => {
    const body = JSON.stringify(new WardrikError("unauthorized", "The token is not valid. Check WARDRIK_TOKEN.").toJSON("/v1/workers"));
    socket.end(
      `HTTP/1.1 401 Unauthorized\r\nContent-Type: application/problem+json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  http.listen(0, "127.0.0.1");
  await once(http, "listening");
  cleanups.push(() => new Promise((r) => http.close(() => r())));
  const { wardrik } = worker({ url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, token: "wrong" });
  const err = await wardrik.listen().then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  expect(err?.message).toMatch(
    /^The daemon at ws:\/\/127\.0\.0\.1:\d+\/v1\/workers refused the worker token \(401: The token is not valid\. Check WARDRIK_TOKEN\.\)\.$/,
  );
  expect(err!.message.split("WARDRIK_TOKEN")).toHaveLength(2);
});
