/**
 * What the real daemon writes on stderr when stderr is a pipe (as under a
 * supervisor or a log shipper): JSON lines only, filtered by --log-level or
 * WARDRIK_LOG_LEVEL, with an access line per HTTP request at debug.
 */
import { describe, expect, it } from "vitest";
import { createProject, freePort, spawnWardrik, waitFor, type CliProcess, type TestProject } from "../helpers/spawn-daemon.js";

interface LogLine {
  level: string;
  time: string;
  msg: string;
  [field: string]: unknown;
}

/** Every line of `stderr` as JSON; a line that is not JSON fails the test with that line. */
function jsonLines(stderr: string): LogLine[] {
  const lines = stderr.split("\n").filter((line) => line !== "");
  return lines.map((line) => {
    try {
      return JSON.parse(line) as LogLine;
    } catch {
      throw new Error(`stderr has a line that is not JSON: ${line}`);
    }
  });
}

/** Runs `wardrik daemon ARGS` in the project on a port of its own, until /v1/health answers. */
async function startDaemon(p: TestProject, args: string[], env: Record<string, string> = {}): Promise<{ daemon: CliProcess; url: string }> {
  const port = await freePort();
  p.write("config.yaml", p.read("config.yaml").replace(/^listen:.*$/m, `listen: 127.0.0.1:${port}`));
  const daemon = spawnWardrik(["daemon", ...args], { cwd: p.dir, env });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${url}/v1/health`)).ok, `${url}/v1/health`);
  return { daemon, url };
}

/** A few requests of different outcomes: 200, 401, 404, with and without a request ID. */
async function someRequests(url: string, token: string): Promise<void> {
  await fetch(`${url}/v1/health`);
  await fetch(`${url}/v1/agents`, { headers: { authorization: `Bearer ${token}`, "x-request-id": "req-logs-1" } });
  await fetch(`${url}/v1/agents`, { headers: { authorization: "Bearer nope" } });
  await fetch(`${url}/v1/no-such-route`, { headers: { authorization: `Bearer ${token}` } });
}

describe("daemon logs on a pipe", () => {
  it("at the default level: JSON lines only, the listening line at info, no debug or access lines", async () => {
    const p = await createProject();
    await someRequests(p.url, p.token);
    await p.send("helper", "hello");
    const stopped = await p.stop();
    expect(stopped.code).toBe(0);
    const lines = jsonLines(p.daemonStderr());
    const listening = lines.find((l) => l.msg.startsWith("wardrik daemon listening on "));
    expect(listening).toMatchObject({ level: "info", url: p.url, org: "default" });
    expect(lines.map((l) => l.level).filter((level) => level === "debug" || level === "trace")).toEqual([]);
    expect(lines.filter((l) => l.msg === "request")).toEqual([]);
  });

  it("with --log-level debug: an access line per request with method, path, status, ms and request ID", async () => {
    const p = await createProject({ start: false });
    const { daemon, url } = await startDaemon(p, ["--log-level", "debug"]);
    // Health answers while the daemon still recovers turns; SIGTERM is handled once it says it listens.
    await waitFor(() => daemon.stderr().includes("wardrik daemon listening on"), "the listening line");
    await someRequests(url, p.token);
    // The requests ran one after the other, so theirs are the last four lines once the last one is there.
    const access = await waitFor(() => {
      const found = jsonLines(daemon.stderr()).filter((l) => l.msg === "request");
      return found.at(-1)?.path === "/v1/no-such-route" ? found.slice(-4) : undefined;
    }, "the access line of the last request");
    expect(access.map((l) => ({ level: l.level, method: l.method, path: l.path, status: l.status, request_id: l.request_id }))).toEqual([
      // Every request gets an ID: the client's when it sent a sane one, else a generated one.
      { level: "debug", method: "GET", path: "/v1/health", status: 200, request_id: expect.stringMatching(/^req_/) },
      { level: "debug", method: "GET", path: "/v1/agents", status: 200, request_id: "req-logs-1" },
      { level: "debug", method: "GET", path: "/v1/agents", status: 401, request_id: expect.stringMatching(/^req_/) },
      { level: "debug", method: "GET", path: "/v1/no-such-route", status: 404, request_id: expect.stringMatching(/^req_/) },
    ]);
    for (const line of access) expect(typeof line.ms).toBe("number");
    const done = await daemon.stop("SIGTERM", 20_000);
    expect(done.code).toBe(0);
    jsonLines(done.stderr);
  });

  it("WARDRIK_LOG_LEVEL sets the level, and --log-level wins over it", async () => {
    const p = await createProject({ start: false });
    const quiet = await startDaemon(p, [], { WARDRIK_LOG_LEVEL: "warn" });
    await someRequests(quiet.url, p.token);
    const quietDone = await quiet.daemon.stop("SIGTERM", 20_000);
    expect(quietDone.code).toBe(0);
    expect(jsonLines(quietDone.stderr).filter((l) => l.level === "info" || l.level === "debug")).toEqual([]);

    const loud = await startDaemon(p, ["--log-level", "debug"], { WARDRIK_LOG_LEVEL: "error" });
    await someRequests(loud.url, p.token);
    await waitFor(() => jsonLines(loud.daemon.stderr()).some((l) => l.level === "debug"), "a debug line");
    const loudDone = await loud.daemon.stop("SIGTERM", 20_000);
    expect(jsonLines(loudDone.stderr).some((l) => l.level === "info" && l.msg.startsWith("wardrik daemon listening on "))).toBe(true);
  });

  it("refuses an unknown level as a usage error, from the flag or the environment", async () => {
    const p = await createProject({ start: false });
    const flag = await p.cli(["daemon", "--log-level", "loud"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/'loud' is invalid.*trace, debug, info, warn, error, fatal, silent/);
    const env = await p.cli(["daemon"], { env: { WARDRIK_LOG_LEVEL: "loud" } });
    expect(env.code).toBe(2);
  });

  it("a daemon that cannot start says why in a JSON line naming the file, the line and the key", async () => {
    const p = await createProject({ start: false, config: (text) => `${text}tool_timeout: soon\n` });
    const line =
      p
        .read("config.yaml")
        .split("\n")
        .findIndex((l) => l.startsWith("tool_timeout")) + 1;
    const r = await p.cli(["daemon"]);
    expect(r.code).toBe(1);
    const lines = jsonLines(r.stderr);
    expect(lines).toEqual([expect.objectContaining({ level: "error", msg: `config.yaml:${line}: tool_timeout must be a number` })]);
  });
});
