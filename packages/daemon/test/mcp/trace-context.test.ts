/**
 * Trace context into an HTTP MCP server: a tool call that carries a
 * traceparent sends it as the W3C `traceparent` header and in
 * `params._meta` (where MCP puts it for every transport). The server is
 * server-everything from npm; a recording HTTP proxy in front of it shows
 * what arrived on the wire.
 */
import { createServer, request, type IncomingHttpHeaders, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpToolset } from "../../src/tools/mcp/index.js";
import { ctx, memoryLog, startHttpEverything, type HttpEverything } from "./mcp-helpers.js";

interface Seen {
  headers: IncomingHttpHeaders;
  body: string;
}

/** Forwards every request to `upstream` unchanged (responses streamed back, SSE included) and keeps what it saw. */
async function recordingProxy(upstream: string): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const target = new URL(upstream);
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      seen.push({ headers: req.headers, body: body.toString("utf8") });
      const out = request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: target.host } },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      out.on("error", () => res.writeHead(502).end());
      out.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}${target.pathname}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("MCP over HTTP: trace context", () => {
  let server: HttpEverything;
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  let web: McpToolset;

  beforeAll(async () => {
    server = await startHttpEverything();
    proxy = await recordingProxy(server.url);
    web = new McpToolset("web", { url: proxy.url }, { log: memoryLog(), startTimeoutMs: 5_000 });
  });
  afterAll(async () => {
    await web.close();
    await proxy.close();
    await server.stop();
  });

  it("sends the call's traceparent as a header and in params._meta; a call without one sends neither", async () => {
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    expect(await web.call("echo", { message: "traced" }, ctx({ traceparent }))).toEqual({ ok: true, output: "Echo: traced" });
    expect(await web.call("echo", { message: "plain" }, ctx())).toEqual({ ok: true, output: "Echo: plain" });

    const calls = proxy.seen.filter((s) => s.body.includes('"tools/call"'));
    expect(calls).toHaveLength(2);
    const [traced, plain] = calls as [Seen, Seen];
    expect(traced.headers.traceparent).toBe(traceparent);
    expect((JSON.parse(traced.body) as { params: { _meta?: unknown } }).params._meta).toEqual({ traceparent });
    expect(plain.headers.traceparent).toBeUndefined();
    expect((JSON.parse(plain.body) as { params: { _meta?: unknown } }).params._meta).toBeUndefined();
    // Other messages (initialize, tools/list) carry no trace context.
    for (const s of proxy.seen.filter((x) => !x.body.includes('"tools/call"'))) expect(s.headers.traceparent).toBeUndefined();
  });
});
