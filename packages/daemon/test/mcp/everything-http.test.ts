import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpToolset } from "../../src/tools/mcp/index.js";
import { ctx, memoryLog, scope, startHttpEverything, until, type HttpEverything } from "./mcp-helpers.js";

// server-everything from npm in streamable-HTTP mode, as a separate process reached by URL.
describe("MCP: server-everything over streamable HTTP", () => {
  let server: HttpEverything;
  let everything: McpToolset;
  const log = memoryLog();

  beforeAll(async () => {
    server = await startHttpEverything();
    everything = new McpToolset(
      "web",
      { url: server.url, headers: { authorization: "Bearer http-secret-token-123" } },
      { log, backoff: { initialMs: 100, maxMs: 400 }, startTimeoutMs: 5_000 },
    );
  });
  afterAll(async () => {
    await everything.close();
    await server.stop();
  });

  it("lists tools and runs text, structured, image and error calls", async () => {
    const tools = await everything.list(scope());
    expect(tools.find((t) => t.name === "web/echo")).toMatchObject({ readOnly: true, idempotent: true });
    expect(await everything.call("echo", { message: "over http" }, ctx())).toEqual({ ok: true, output: "Echo: over http" });
    expect(await everything.call("get-structured-content", { location: "New York" }, ctx())).toEqual({
      ok: true,
      output: { structured: { temperature: 33, conditions: "Cloudy", humidity: 82 } },
    });
    const image = await everything.call("get-tiny-image", {}, ctx());
    expect(JSON.stringify(image)).toMatch(/"type":"image","mime_type":"image\/png"/);
    expect(await everything.call("get-sum", { a: 1 }, ctx())).toMatchObject({ ok: false, kind: "failed" });
  });

  it("cancels a long-running call over HTTP", async () => {
    const controller = new AbortController();
    const pending = everything.call("trigger-long-running-operation", { duration: 10, steps: 5 }, ctx({ signal: controller.signal }));
    setTimeout(() => controller.abort(new Error("turn cancelled")), 200);
    expect(await pending).toMatchObject({ ok: false, kind: "killed" });
    expect(await everything.call("echo", { message: "after cancel" }, ctx())).toEqual({ ok: true, output: "Echo: after cancel" });
  });

  it("reports the server down when it goes away, and reconnects once it is back", async () => {
    const port = server.port;
    await server.stop();
    const down = await everything.call("echo", { message: "anyone?" }, ctx());
    expect(down.ok).toBe(false);
    if (!down.ok) expect(down.error).toMatch(/MCP server "web"/);
    await until(() => everything.status(scope())[0]!.status === "down", 5_000, "status down");
    expect(everything.status(scope())[0]!.reason).toMatch(/http:\/\/127\.0\.0\.1:\d+\/mcp/);

    server = await startHttpEverything(port);
    // The backoff is short here; the next use after it restarts the session.
    await until(async () => (await everything.call("echo", { message: "back" }, ctx())).ok, 10_000, "reconnect");
    expect(everything.status(scope())[0]!.status).toBe("up");
    // The header's token never reaches the log.
    expect(log.lines.join("\n")).not.toContain("http-secret-token-123");
  });
});
