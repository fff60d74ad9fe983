/**
 * The end-to-end helper's daemon in the test process (helpers/in-process-daemon.ts):
 * what the files that run that way rely on. Its log is the command's, a stop
 * and start keep the directory and port, a kill -9 is refused rather than
 * faked, an error that escapes fails the test, and a daemon leaves nothing in the process for the next one: no
 * handle, timer or listener once closed, no count of its turns in the next
 * daemon's metrics.
 */
import { describe, expect, it } from "vitest";
import { parsePrometheusText, sampleValue } from "../helpers/prometheus-text.js";
import { createProject, waitFor } from "../helpers/spawn-daemon.js";

/** What the event loop holds (handles, timers, requests), counted by kind. */
function resources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

function listeners(): Record<string, number> {
  return Object.fromEntries(process.eventNames().map((e) => [String(e), process.listenerCount(e)]));
}

describe("a daemon of the e2e helper in the test process", () => {
  it("logs what `wardrik daemon` logs, as JSON lines, and serves HTTP and the CLI on 127.0.0.1", async (ctx) => {
    const p = await createProject({ process: "in-process", scope: ctx });
    expect(p.mode).toBe("in-process");
    expect(p.child).toBeUndefined();
    expect(p.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const lines = p
      .daemonStderr()
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { level: string; msg: string });
    expect(lines.map((l) => l.msg)).toContainEqual(expect.stringMatching(/^wardrik daemon listening on http:\/\/127\.0\.0\.1:\d+ \(org /));
    const ls = await p.cli(["ls"]);
    expect(ls.code, ls.stderr).toBe(0);
    expect(ls.stdout).toContain("helper");
  });

  it("stops and starts again on the same directory and port, keeping what it stored; kill -9 is refused", async (ctx) => {
    const p = await createProject({ process: "in-process", scope: ctx });
    await p.send("helper", "before the restart");
    const port = p.port;
    const stop = await p.restart();
    expect(stop).toMatchObject({ code: 0, signal: null, forced: false });
    expect(p.port).toBe(port);
    expect(p.daemonStderr()).toContain('"msg":"shutdown: done"');
    const events = await p.events("helper");
    expect(events.some((e) => e.type === "dev.wardrik.message.queued" && e.data.text === "before the restart")).toBe(true);
    await expect(p.kill()).rejects.toThrow(/SIGKILL needs a spawned daemon/);
  });

  it("once closed, leaves no handle, timer or process listener behind", async (ctx) => {
    const handlesBefore = resources();
    const listenersBefore = listeners();
    const p = await createProject({ process: "in-process", scope: ctx });
    await p.send("helper", "hello");
    const follow = p.spawnCli(["events", "helper", "--follow"]);
    await follow.waitForOutput((out) => out.includes("turn.completed"));
    await follow.stop();
    await p.stop();
    // Of each kind, no more than before: what an earlier test left closing may be gone by now, nothing may be added.
    const added = () => Object.entries(resources()).filter(([kind, n]) => n > (handlesBefore[kind] ?? 0));
    await waitFor(() => added().length === 0, "the daemon's handles to close", 10_000).catch(() => expect(added()).toEqual([]));
    expect(listeners()).toEqual(listenersBefore);
  });

  it("an error that escapes while it runs fails the test's next request and its stop, as the end of a spawned daemon's process would", async (ctx) => {
    const p = await createProject({ process: "in-process", scope: ctx });
    // What Node tells watchers of an uncaught exception (vitest's own handler is not one of them: nothing else sees this).
    process.emit("uncaughtExceptionMonitor", new Error("boom in a daemon's timer"), "uncaughtException");
    await expect(p.api("GET", "/v1/health")).rejects.toThrow(/crashed .*boom in a daemon's timer/);
    await expect(p.stop()).rejects.toThrow(/crashed/);
    // Closed all the same: nothing answers any more.
    await expect(p.api("GET", "/v1/health")).rejects.toThrow(/fetch failed/);
  });

  it("a second daemon in the same process counts only its own turns", async (ctx) => {
    const first = await createProject({ process: "in-process", scope: ctx });
    await first.send("helper", "one");
    const second = await createProject({ process: "in-process", scope: ctx });
    const turns = (p: typeof first) =>
      p.api("GET", "/metrics").then((r) => sampleValue(parsePrometheusText(r.text), "wardrik_turns_total"));
    expect(await turns(first)).toBe(1);
    expect(await turns(second)).toBe(0);
  });
});
