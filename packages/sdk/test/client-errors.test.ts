/**
 * The client reads the daemon's error answers, RFC 9457 problem documents:
 * `code`, `detail` (the message), `retryable` and Retry-After become the
 * WardrikError it throws; an answer that is not one (a proxy's page) still
 * gives its status.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WardrikError } from "@wardrik/protocol";
import { afterAll, beforeAll, expect, it } from "vitest";
import { WardrikClient } from "../src/client.js";

let server: Server;
let client: WardrikClient;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url?.split("?")[0] === "/v1/agents") {
      res.writeHead(429, { "content-type": "application/problem+json", "retry-after": "3" });
      res.end(
        JSON.stringify({
          type: "about:blank",
          title: "Too Many Requests",
          status: 429,
          detail: "This org sent more than limits.org_requests_per_s requests a second; wait 3 s.",
          instance: "/v1/agents",
          code: "rate_limited",
          retryable: true,
        }),
      );
      return;
    }
    if (req.url?.startsWith("/v1/agents/agt_1/events/stream")) {
      res.writeHead(404, { "content-type": "application/problem+json" });
      res.end(
        JSON.stringify({
          type: "about:blank",
          title: "Not Found",
          status: 404,
          detail: "No agent agt_1.",
          code: "not_found",
          retryable: false,
        }),
      );
      return;
    }
    res.writeHead(502, { "content-type": "text/html" });
    res.end("<html><body>Bad gateway</body></html>");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  client = new WardrikClient({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: "t" });
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

async function thrown(p: Promise<unknown>): Promise<WardrikError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(WardrikError.isInstance(e)).toBe(true);
  return e as WardrikError;
}

it("a problem document becomes the error: code, detail as the message, retryable, Retry-After", async () => {
  const e = await thrown(client.listAgents());
  expect(e).toMatchObject({ code: "rate_limited", status: 429, retryable: true, retryAfter: 3 });
  expect(e.message).toBe("This org sent more than limits.org_requests_per_s requests a second; wait 3 s.");
});

it("following events reads the same document", async () => {
  const e = await thrown(client.follow("agt_1").next());
  expect(e).toMatchObject({ code: "not_found", status: 404, retryable: false, message: "No agent agt_1." });
});

it("an answer that is not a problem document keeps its status, retryable when it is a 5xx", async () => {
  const e = await thrown(client.health());
  expect(e).toMatchObject({ code: "internal", status: 502, retryable: true });
  expect(e.message).toBe("The daemon answered HTTP 502.");
});
