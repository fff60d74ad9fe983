/**
 * `npm run bench -- webhook-client [REQUESTS] [ROUNDS]`: the webhook sender's
 * HTTP client, hand-written (src/webhooks/http-post.ts: raw sockets and its
 * own answer parser) against undici (its Agent and `request`, kept-alive
 * connections as the hand-written one keeps them), on the measured path: a
 * signed CloudEvent of about 1 KB POSTed to a subscriber on 127.0.0.1 that
 * answers 200, eight requests out at a time (the sender's queues), the
 * status, Retry-After and body read back. The receiver is a process of its
 * own (its HTTP work is not the daemon's); the figure is this process's CPU
 * time per request (REQUESTS a round, default 4000; ROUNDS, default 6).
 * Prints one JSON line.
 */
import { spawn } from "node:child_process";
import { Agent, request } from "undici";
import { HttpPoster, postTarget } from "../packages/daemon/dist/webhooks/http-post.js";
import { compare, printComparisons } from "./side-by-side.js";

const REQUESTS = Number(process.argv[2] ?? 4000);
const ROUNDS = Number(process.argv[3] ?? 6);
const IN_FLIGHT = 8;

const receiver = spawn(
  process.execPath,
  [
    "-e",
    `const server = require("node:http").createServer((req, res) => { req.resume(); req.on("end", () => res.writeHead(200, { "content-type": "text/plain" }).end("ok")); });
     server.keepAliveTimeout = 60000;
     server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"));`,
  ],
  { stdio: ["ignore", "pipe", "inherit"] },
);
const port = await new Promise<number>((resolve) => receiver.stdout!.once("data", (d: Buffer) => resolve(Number(String(d).trim()))));
const url = `http://127.0.0.1:${port}/hook`;

const body = JSON.stringify({
  specversion: "1.0",
  id: "01JB0000000000000000000000",
  source: "wardrik://default/agents/support",
  type: "dev.wardrik.turn.completed",
  time: new Date().toISOString(),
  datacontenttype: "application/json",
  wardrikorg: "default",
  wardrikrun: "run_01JB0000000000000000000000",
  data: { reply: "x".repeat(700), iterations: 2, cost_usd: 0.0021, duration_ms: 1843 },
});
const headers = {
  "content-type": "application/cloudevents+json",
  "user-agent": "wardrik/0.1.0",
  "webhook-id": "01JB0000000000000000000000",
  "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
  "webhook-signature": "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
};

/** Runs `ops` requests, IN_FLIGHT at a time; each must come back 200 with its body. */
async function drive(ops: number, one: () => Promise<{ status: number; body: string }>): Promise<void> {
  let left = ops;
  const lane = async (): Promise<void> => {
    while (left-- > 0) {
      const a = await one();
      if (a.status !== 200 || a.body !== "ok") throw new Error(`unexpected answer ${a.status} ${a.body}`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
}

const poster = new HttpPoster();
const target = postTarget(url);
const agent = new Agent({ keepAliveTimeout: 4000, connections: IN_FLIGHT });

try {
  const result = await compare(
    "POST a 1 KB CloudEvent, 8 in flight, keep-alive, read status + Retry-After + body",
    REQUESTS,
    ROUNDS,
    (ops) => drive(ops, () => poster.post(target, headers, body, 10_000)),
    {
      name: "undici 6 (Agent + request)",
      side: (ops) =>
        drive(ops, async () => {
          const res = await request(url, { method: "POST", headers, body, dispatcher: agent, headersTimeout: 10_000, bodyTimeout: 10_000 });
          void res.headers["retry-after"];
          return { status: res.statusCode, body: await res.body.text() };
        }),
    },
  );
  printComparisons("webhook-client", [result]);
} finally {
  poster.close("bench done");
  await agent.close();
  receiver.kill();
}
