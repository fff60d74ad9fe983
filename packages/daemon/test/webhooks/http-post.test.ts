/**
 * The sender's HTTP POST against real servers on 127.0.0.1: the answer's
 * status, Retry-After and body; a subscriber that never answers is cut off
 * by the signal (the subscriber's timeout) with its reason; a closed port is
 * a network error with its code.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { postJson } from "../../src/webhooks/http-post.js";
import { freePort } from "../helpers/free-port.js";

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}

describe("postJson", () => {
  it("sends the body and headers, and reads the status, Retry-After and the answer's text", async () => {
    let got: { body: string; headers: Record<string, unknown> } | undefined;
    const url = await serve((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        got = { body, headers: req.headers };
        res.writeHead(503, { "retry-after": "7" }).end("busy right now");
      });
    });
    const answer = await postJson(
      url,
      { "content-type": "application/json", "webhook-id": "evt_1" },
      '{"a":"é"}',
      new AbortController().signal,
    );
    expect(answer).toEqual({ status: 503, retryAfter: "7", body: "busy right now" });
    expect(got?.body).toBe('{"a":"é"}');
    expect(got?.headers["webhook-id"]).toBe("evt_1");
    expect(got?.headers["content-length"]).toBe(String(Buffer.byteLength('{"a":"é"}')));
  });

  it("gives up on a subscriber that never answers when the signal aborts, with its reason", async () => {
    const url = await serve(() => undefined);
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error("no answer within 0.2 s")), 200);
    await expect(postJson(url, {}, "{}", ac.signal)).rejects.toThrow();
    expect((ac.signal.reason as Error).message).toBe("no answer within 0.2 s");
  });

  it("gives up on an answer cut off half-way", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-length": "100" });
      res.write("only part");
      setTimeout(() => res.destroy(), 50);
    });
    await expect(postJson(url, {}, "{}", new AbortController().signal)).rejects.toThrow();
  });

  it("a closed port is a network error with its code", async () => {
    const port = await freePort();
    await expect(postJson(`http://127.0.0.1:${port}/hook`, {}, "{}", new AbortController().signal)).rejects.toMatchObject({
      code: "ECONNREFUSED",
    });
  });
});
