import { afterEach, describe, expect, it } from "vitest";
import { McpToolset } from "../../src/tools/mcp/index.js";
import { ctx, EVERYTHING, fixture, memoryLog, nodeServer, scope, sleep, until } from "./mcp-helpers.js";

const SECRET = "s3cr3t-value-do-not-show";
// Short backoff for tests; a generous start timeout, so a busy machine does not fail a good start.
const fast = { backoff: { initialMs: 300, maxMs: 1_200 }, startTimeoutMs: 10_000 };

/** The log's "MCP server is down" lines. */
function downLines(lines: string[]): { msg: string; retry_in_ms?: number }[] {
  return lines.map((l) => JSON.parse(l) as { msg: string; retry_in_ms?: number }).filter((l) => l.msg === "MCP server is down");
}

let open: McpToolset[] = [];
afterEach(async () => {
  await Promise.all(open.map((t) => t.close()));
  open = [];
});
function toolset(...args: ConstructorParameters<typeof McpToolset>): McpToolset {
  const t = new McpToolset(...args);
  open.push(t);
  return t;
}

// Deliberately broken servers (test/mcp/fixtures): each failure names the server and says why.
describe("MCP: broken servers", () => {
  it("a server that exits at once: down with its exit code and stderr, secrets blanked", async () => {
    const log = memoryLog();
    const broken = toolset("broken", nodeServer(fixture("exit-at-once.mjs"), [], { FIXTURE_SECRET: SECRET }), { ...fast, log });
    expect(await broken.list(scope())).toEqual([]);
    const [status] = broken.status(scope());
    expect(status!.status).toBe("down");
    expect(status!.reason).toMatch(/exited during startup \(exit code 3\)/);
    expect(status!.reason).toContain("fatal: cannot open database with key [redacted]");
    const out = await broken.call("anything", {}, ctx());
    expect(out).toMatchObject({ ok: false, kind: "unavailable" });
    if (!out.ok) {
      expect(out.error).toMatch(/^MCP server "broken" is down: command ".*node.*" exited during startup/);
      expect(out.error).toMatch(/try to start it again on the next use after/);
    }
    // The "down" log line is written after stderr has drained.
    await until(() => downLines(log.lines).length === 1, 5_000, 'the "down" log line');
    const everything = JSON.stringify({ status, out, log: log.lines });
    expect(everything).not.toContain(SECRET);
  });

  it("a missing command: says it was not found", async () => {
    const missing = toolset("missing", { command: "wardrik-no-such-mcp-server" }, fast);
    await missing.list(scope());
    expect(missing.status(scope())[0]!.reason).toMatch(/could not start command "wardrik-no-such-mcp-server": it was not found/);
  });

  it("a server that never answers initialize: down after the start timeout, with backoff between attempts", async () => {
    const log = memoryLog();
    const hung = toolset("hung", nodeServer(fixture("never-initialize.mjs")), { ...fast, startTimeoutMs: 1_000, log });
    const started = Date.now();
    const first = await hung.call("x", {}, ctx());
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(first).toMatchObject({ ok: false, kind: "unavailable" });
    if (!first.ok) {
      expect(first.error).toMatch(/did not answer the MCP initialize request within 1 s/);
      expect(first.error).toContain("fixture: waiting forever");
    }
    // Within the backoff, calls fail at once (well under the start timeout) without a new process.
    const t0 = Date.now();
    expect(await hung.call("x", {}, ctx())).toMatchObject({ ok: false, kind: "unavailable" });
    expect(Date.now() - t0).toBeLessThan(500);
    // After it, the next use tries again, and a second failure doubles the wait.
    await sleep(350);
    await hung.call("x", {}, ctx());
    expect(hung.status(scope())[0]!.reason).toMatch(/next use after 0\.\d s/);
    await until(() => downLines(log.lines).length >= 2, 5_000, 'the second "down" log line');
    expect(downLines(log.lines).map((l) => l.retry_in_ms)).toEqual([300, 600]);
  });

  it("a server that crashes on a call: the call fails with the reason, the server restarts on a later use", async () => {
    const crashy = toolset("crashy", nodeServer(fixture("crash-on-call.mjs"), [], { FIXTURE_SECRET: SECRET }), fast);
    await crashy.list(scope());
    const before = await crashy.call("ok", { n: 1 }, ctx());
    expect(before.ok).toBe(true);

    const read = await crashy.call("crash", {}, ctx());
    expect(read.ok).toBe(false);
    if (!read.ok) {
      // A read-only call is safe to try again: failed, not lost.
      expect(read.kind).toBe("failed");
      expect(read.error).toMatch(
        /MCP server "crashy" stopped during the call to crashy\/crash: the server process exited \(exit code 70\)/,
      );
      expect(read.error).toContain("panic: read crashed (secret [redacted])");
      expect(read.error).not.toContain(SECRET);
    }
    expect(crashy.status(scope())[0]!.status).toBe("down");
    // The cached tools stay offered while it is down, so the model can still name them.
    expect((await crashy.list(scope())).map((t) => t.name)).toContain("crashy/ok");
    expect(await crashy.call("ok", {}, ctx())).toMatchObject({ ok: false, kind: "unavailable" });

    await sleep(350);
    const after = await crashy.call("ok", { n: 2 }, ctx());
    expect(after.ok).toBe(true);
    const pid = (o: typeof before) => (o.ok ? String(o.output).split(" pid ")[1] : undefined);
    expect(pid(after)).not.toBe(pid(before)); // a new process
    expect(crashy.status(scope())[0]!.status).toBe("up");

    // A call that is not read-only may have had its effect: the runtime must ask before repeating it.
    const write = await crashy.call("crash_write", {}, ctx());
    expect(write).toMatchObject({ ok: false, kind: "lost" });
  });

  it("other servers keep working while one is broken", async () => {
    const broken = toolset("broken", nodeServer(fixture("exit-at-once.mjs")), fast);
    const hung = toolset("hung", nodeServer(fixture("never-initialize.mjs")), { ...fast, startTimeoutMs: 500 });
    const good = toolset("good", nodeServer(EVERYTHING, ["stdio"]));
    const [b, h, g] = await Promise.all([
      broken.call("x", {}, ctx()),
      hung.call("x", {}, ctx()),
      good.call("echo", { message: "fine" }, ctx()),
    ]);
    expect(b.ok).toBe(false);
    expect(h.ok).toBe(false);
    expect(g).toEqual({ ok: true, output: "Echo: fine" });
    expect([broken, hung, good].map((t) => t.status(scope())[0]!.status)).toEqual(["down", "down", "up"]);
  });

  it("starts stdio servers with only a minimal environment plus the configured env", async () => {
    process.env.WARDRIK_TEST_DAEMON_ONLY = "leak";
    try {
      const crashy = toolset("crashy", nodeServer(fixture("crash-on-call.mjs"), [], { FIXTURE_SECRET: SECRET }), fast);
      const out = await crashy.call("env", {}, ctx());
      expect(out.ok).toBe(true);
      const names = JSON.parse(String(out.ok ? out.output : "[]")) as string[];
      expect(names).toContain("FIXTURE_SECRET");
      expect(names).toContain("PATH");
      expect(names).not.toContain("WARDRIK_TEST_DAEMON_ONLY");
    } finally {
      delete process.env.WARDRIK_TEST_DAEMON_ONLY;
    }
  });
});
