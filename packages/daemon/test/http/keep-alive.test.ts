/**
 * Idle connections: a client is told to keep one for KEEP_ALIVE_HINT_S, and
 * the daemon keeps it far longer, so a client whose own timer runs late on a
 * loaded machine does not write into a connection the daemon has just closed
 * (seen as ECONNRESET in the fair-share benchmark). A real listener on
 * 127.0.0.1 with a small app; raw requests, to read the headers as sent.
 */
import type { Server } from "node:http";
import { connect } from "node:net";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiEnv } from "../../src/http/api-env.js";
import { listen } from "../../src/http/http-listener.js";
import { KEEP_ALIVE_HINT_S } from "../../src/http/limits.js";

let server: Server;
let port: number;

beforeAll(async () => {
  const app = new Hono<ApiEnv>();
  app.get("/ping", (c) => c.text("pong"));
  server = await listen(app, "127.0.0.1", 0, { authenticate: () => Promise.resolve(undefined) });
  port = (server.address() as { port: number }).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Sends `head` on a new connection; the answer's head, once it has come. */
function answerHead(head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(head));
    let got = "";
    socket.on("data", (chunk: Buffer) => {
      got += chunk.toString("latin1");
      const end = got.indexOf("\r\n\r\n");
      if (end >= 0) {
        socket.destroy();
        resolve(got.slice(0, end).toLowerCase());
      }
    });
    socket.on("error", reject);
  });
}

describe("keep-alive", () => {
  it("hints a short idle time, and keeps an idle connection well past it", async () => {
    const head = await answerHead("GET /ping HTTP/1.1\r\nHost: x\r\n\r\n");
    expect(head).toMatch(/^http\/1\.1 200/);
    expect(head).toContain("\r\nconnection: keep-alive");
    expect(head).toContain(`\r\nkeep-alive: timeout=${KEEP_ALIVE_HINT_S}`);
    // Node's default would close at the hinted time itself: a late client's next request would meet a reset.
    expect(server.keepAliveTimeout).toBeGreaterThanOrEqual(KEEP_ALIVE_HINT_S * 1000 * 10);
  });

  it("a client that asks to close gets no keep-alive", async () => {
    const head = await answerHead("GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    expect(head).toContain("\r\nconnection: close");
    expect(head).not.toContain("keep-alive");
  });
});
