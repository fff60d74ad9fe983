/**
 * The worker WebSocket (`/v1/workers`): a few frames per connection, in
 * order or not: hello, register, result, cost, pong, drain, junk, binary,
 * batches, nesting bombs. The daemon may close a connection with a reason
 * (1008, 1009, 4000); closing it without one (1006) or with 1011 is a crash.
 */
import WebSocket from "ws";
import { WORKER_PROTOCOL_VERSION } from "@wardrik/protocol";
import { whyFailed, type FuzzContext, type FuzzTarget, type Outcome } from "../exchange.js";
import { hostileText, mutate, randomJson, randomString, type Random } from "../random.js";

const KINDS = ["hello", "register", "result", "cost", "pong", "drain", "junk", "binary", "batch"] as const;

function frame(r: Random, kind: (typeof KINDS)[number]): string | Buffer {
  const callId = r.chance(0.7) ? `call_${r.int(1e6)}` : randomString(r).slice(0, 300);
  const valid: Record<(typeof KINDS)[number], unknown> = {
    hello: {
      type: "hello",
      protocol: r.chance(0.9) ? WORKER_PROTOCOL_VERSION : r.int(5),
      name: "fuzz",
      instance: `i-${r.int(100)}`,
      sdk: "fuzz",
    },
    register: {
      type: "register",
      tools: Array.from({ length: r.int(4) }, () => ({
        name: r.chance(0.7) ? `tool_${r.int(50)}` : randomString(r).slice(0, 80),
        description: randomString(r).slice(0, 200),
        inputSchema: r.chance(0.8) ? { type: "object" } : randomJson(r, 3),
        readOnly: r.chance(0.5),
        idempotent: r.chance(0.5),
      })),
    },
    result: r.chance(0.5)
      ? { type: "result", callId, attempt: 1 + r.int(3), ok: true, output: randomJson(r, 4) }
      : { type: "result", callId, attempt: 1, ok: false, error: randomString(r) },
    cost: { type: "cost", callId, usd: r.pick([0.01, -1, 1e308, 0]) },
    pong: { type: "pong" },
    drain: { type: "drain" },
    junk: randomJson(r, 3),
    binary: null,
    batch: [{ type: "pong" }, { type: "cost", callId, usd: 0.1 }],
  };
  if (kind === "binary") return Buffer.from([r.int(256), r.int(256), 0x7b]);
  const json = JSON.stringify(r.chance(0.2) ? mutate(r, valid[kind], 3) : valid[kind]) ?? "null";
  return r.chance(0.1) ? hostileText(r, json) : json;
}

export const workerProtocol: FuzzTarget = {
  name: "worker-protocol",
  async once(r, ctx) {
    const kinds = [
      r.chance(0.8) ? "hello" : r.pick(KINDS),
      ...Array.from({ length: 1 + r.int(4) }, () => r.pick(KINDS)),
    ] as (typeof KINDS)[number][];
    const frames = kinds.map((k) => frame(r, k));
    const token = r.chance(0.9) ? ctx.token : r.pick([ctx.otherToken, "nope"]);
    return exchangeFrames(ctx, `worker frames ${kinds.join(",")}`, token, frames);
  },
};

function exchangeFrames(ctx: FuzzContext, request: string, token: string, frames: (string | Buffer)[]): Promise<Outcome> {
  const target = "worker-protocol";
  return new Promise((resolve) => {
    const ws = new WebSocket(ctx.url.replace(/^http/, "ws") + "/v1/workers", { headers: { authorization: `Bearer ${token}` } });
    let settled = false;
    const done = (o: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    // The daemon answers or closes within a moment; after that the fuzzer closes the connection itself.
    const timer = setTimeout(() => {
      ws.close(1000);
      done({ target, request, status: "open" });
    }, 500);
    ws.on("unexpected-response", (_req, res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      done({ target, request, status: String(status), ...(status >= 500 ? { crash: `the upgrade was answered ${status}` } : {}) });
    });
    ws.on("error", (err) => done({ target, request, status: "error", crash: whyFailed(ctx, err, false) }));
    ws.on("open", () => {
      for (const f of frames) ws.send(f, { binary: typeof f !== "string" });
    });
    ws.on("close", (code, reason) => {
      const crash =
        code === 1006 || code === 1011 ? `closed ${code} ${reason.toString()}: ${whyFailed(ctx, new Error("closed"), false)}` : undefined;
      done({ target, request, status: `close_${code}`, ...(crash ? { crash } : {}) });
    });
  });
}
