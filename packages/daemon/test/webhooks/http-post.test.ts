/**
 * The sender's own HTTP/1.1 client against real servers on 127.0.0.1 (Node's
 * http and https servers, and plain sockets where a test needs an answer no
 * server library would send): the answer's status, Retry-After and body in
 * every framing (Content-Length, chunked, to the close), interim answers,
 * kept-alive connections that are reused, dropped when the server closes
 * them, and a request sent once more when a reused one turns out closed; a
 * subscriber that never answers is cut off after its timeout with that
 * reason; a closed port is a network error with its code; TLS.
 */
import { createServer, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from "node:net";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { HttpPoster, postTarget } from "../../src/webhooks/http-post.js";
import { freePort } from "../helpers/free-port.js";

const servers: (Server | NetServer)[] = [];
const posters: HttpPoster[] = [];
afterEach(async () => {
  for (const p of posters.splice(0)) p.close("the test is over");
  for (const s of servers.splice(0)) {
    if ("closeAllConnections" in s) s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

function poster(tls = {}): HttpPoster {
  const p = new HttpPoster(tls);
  posters.push(p);
  return p;
}

/** A Node HTTP server; `connections` counts the TCP connections it accepted. */
async function serve(handler: Parameters<typeof createServer>[1]): Promise<{ url: string; connections: () => number }> {
  const server = createServer(handler);
  let connections = 0;
  server.on("connection", () => connections++);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook?x=1`, connections: () => connections };
}

/** A plain TCP server: `onRequest` gets each request's bytes (one request per data event here) and its socket. */
async function serveRaw(
  onRequest: (socket: Socket, request: string, n: number) => void,
): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  let n = 0;
  const server = createNetServer((socket) => {
    connections++;
    socket.on("data", (d) => onRequest(socket, d.toString("latin1"), n++));
    socket.on("error", () => undefined);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, connections: () => connections };
}

const ok = () => poster();

describe("HttpPoster", () => {
  it("sends the body and headers, and reads the status, Retry-After and the answer's text", async () => {
    let got: { body: string; headers: Record<string, unknown>; url?: string } | undefined;
    const { url } = await serve((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        got = { body, headers: req.headers, url: req.url };
        res.writeHead(503, { "retry-after": "7" }).end("busy right now");
      });
    });
    const answer = await ok().post(postTarget(url), { "content-type": "application/json", "webhook-id": "evt_1" }, '{"a":"é"}', 5000);
    expect(answer).toEqual({ status: 503, retryAfter: "7", body: "busy right now" });
    expect(got?.body).toBe('{"a":"é"}');
    expect(got?.url).toBe("/hook?x=1");
    expect(got?.headers["webhook-id"]).toBe("evt_1");
    expect(got?.headers.host).toBe(new URL(url).host);
    expect(got?.headers["content-length"]).toBe(String(Buffer.byteLength('{"a":"é"}')));
  });

  it("reads chunked answers and skips interim ones; keeps one connection for many requests", async () => {
    const { url, connections } = await serve((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeEarlyHints({ link: "</x>; rel=preload" });
        res.writeHead(202, { "content-type": "text/plain" });
        // No Content-Length: Node sends these as chunks.
        res.write("accep");
        setTimeout(() => res.end("ted"), 5);
      });
    });
    const p = ok();
    const target = postTarget(url);
    for (let i = 0; i < 5; i++)
      expect(await p.post(target, {}, `{"n":${i}}`, 5000)).toEqual({ status: 202, retryAfter: undefined, body: "accepted" });
    expect(connections()).toBe(1);
  });

  it("reads a body that runs to the connection's close, and keeps at most 4 KiB of it", async () => {
    const { url } = await serveRaw((socket) => socket.end(`HTTP/1.1 500 Oops\r\nretry-after: 3\r\n\r\n${"x".repeat(10_000)}`));
    const answer = await ok().post(postTarget(url), {}, "{}", 5000);
    expect(answer.status).toBe(500);
    expect(answer.retryAfter).toBe("3");
    expect(answer.body).toBe("x".repeat(4096));
  });

  it("opens a new connection after one the server closed, or said it would close", async () => {
    // Closes each connection 50 ms after answering (an idle timeout), or at once when the answer says so.
    const { url, connections } = await serveRaw((socket, req) => {
      const close = req.includes("x-close: 1");
      socket.write(`HTTP/1.1 200 OK\r\ncontent-length: 0\r\n${close ? "connection: close\r\n" : ""}\r\n`);
      if (close) socket.end();
      else setTimeout(() => socket.end(), 50);
    });
    const p = ok();
    const target = postTarget(url);
    expect((await p.post(target, {}, "{}", 5000)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect((await p.post(target, { "x-close": "1" }, "{}", 5000)).status).toBe(200);
    expect((await p.post(target, {}, "{}", 5000)).status).toBe(200);
    expect(connections()).toBe(3);
  });

  it("sends a request once more on a new connection when a reused one was closed before any answer", async () => {
    // Answers the first request; drops the connection on the second, as a server that timed it out at that moment.
    const { url, connections } = await serveRaw((socket, _req, n) => {
      if (n === 1) socket.destroy();
      else socket.write("HTTP/1.1 204 No Content\r\n\r\n");
    });
    const p = ok();
    const target = postTarget(url);
    expect((await p.post(target, {}, "{}", 5000)).status).toBe(204);
    expect((await p.post(target, {}, "{}", 5000)).status).toBe(204);
    expect(connections()).toBe(2);
  });

  it("gives up on a subscriber that never answers after its timeout, with that reason; abortAll cuts requests off", async () => {
    const { url } = await serve(() => undefined);
    const p = ok();
    await expect(p.post(postTarget(url), {}, "{}", 200)).rejects.toThrow("no answer within 0.2 s");
    const out = p.post(postTarget(url), {}, "{}", 60_000);
    setTimeout(() => p.abortAll("the daemon is stopping"), 50);
    await expect(out).rejects.toThrow("the daemon is stopping");
  });

  it("gives up on an answer cut off half-way, and on one that is not HTTP", async () => {
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { "content-length": "100" });
      res.write("only part");
      setTimeout(() => res.destroy(), 50);
    });
    await expect(ok().post(postTarget(url), {}, "{}", 5000)).rejects.toThrow("the connection closed before the answer ended");
    const raw = await serveRaw((socket) => socket.end("SSH-2.0-OpenSSH_9.6\r\n\r\n"));
    await expect(ok().post(postTarget(raw.url), {}, "{}", 5000)).rejects.toThrow("did not answer in HTTP/1.x");
  });

  it("a closed port is a network error with its code", async () => {
    const port = await freePort();
    await expect(ok().post(postTarget(`http://127.0.0.1:${port}/hook`), {}, "{}", 5000)).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });

  it("refuses a header value with a line break instead of sending it", async () => {
    const { url } = await serve((_req, res) => res.end());
    await expect(ok().post(postTarget(url), { "user-agent": "x\r\ninjected: 1" }, "{}", 5000)).rejects.toThrow(
      "header user-agent has a line break",
    );
  });

  it("speaks TLS to an https subscriber, checking its certificate", async () => {
    const dir = new URL("../fixtures/tls/", import.meta.url);
    const cert = readFileSync(new URL("localhost-cert.pem", dir), "utf8");
    const server = createHttpsServer({ cert, key: readFileSync(new URL("localhost-key.pem", dir), "utf8") }, (req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(200).end(`hello ${req.headers.host}`));
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `https://localhost:${(server.address() as AddressInfo).port}/hook`;
    expect(await poster({ ca: cert }).post(postTarget(url), {}, "{}", 5000)).toMatchObject({
      status: 200,
      body: `hello ${new URL(url).host}`,
    });
    // Without the test's authority the self-signed certificate is refused.
    await expect(ok().post(postTarget(url), {}, "{}", 5000)).rejects.toMatchObject({ code: "DEPTH_ZERO_SELF_SIGNED_CERT" });
  });
});
