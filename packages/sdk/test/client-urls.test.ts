/** WARDRIK_URL may list the nodes of a cluster: a request that cannot connect to one goes to the next. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { WardrikClient } from "../src/client.js";

let up: Server;
let upUrl = "";
let downUrl = "";
let hits = 0;

beforeAll(async () => {
  up = createServer((req, res) => {
    hits++;
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ ok: true, version: "test", path: req.url }));
  });
  await new Promise<void>((r) => up.listen(0, "127.0.0.1", r));
  upUrl = `http://127.0.0.1:${(up.address() as AddressInfo).port}`;
  // A port that was just free: nothing listens there, so connecting is refused.
  const gone = createServer();
  await new Promise<void>((r) => gone.listen(0, "127.0.0.1", r));
  downUrl = `http://127.0.0.1:${(gone.address() as AddressInfo).port}`;
  await new Promise<void>((r) => gone.close(() => r()));
});
afterAll(() => new Promise<void>((r) => up.close(() => r())));

it("a refused node is skipped for the next one, which then stays in use", async () => {
  const client = new WardrikClient({ url: `${downUrl}, ${upUrl}/`, token: "t" });
  expect(client.url).toBe(downUrl);
  expect((await client.health()).ok).toBe(true);
  expect(client.url).toBe(upUrl);
  expect(hits).toBe(1);
});

it("with every node refusing, the error names the address and the cause", async () => {
  const client = new WardrikClient({ url: `${downUrl},${downUrl}`, token: "t" });
  await expect(client.health()).rejects.toThrow(/Cannot reach the Wardrik daemon at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
});

it("an address list with nothing in it is refused at once", () => {
  expect(() => new WardrikClient({ url: " , ", token: "t" })).toThrow(/names no address/);
});
