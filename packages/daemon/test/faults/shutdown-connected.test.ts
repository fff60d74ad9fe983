/**
 * Ctrl-C with everything connected: a worker running a call, an MCP server,
 * an event follower and an `ask` waiting. The daemon stops taking requests,
 * stops its turns at a safe point, tells the worker it is going away, logs
 * each step, and exits within 5 s. After a restart the same worker process
 * serves calls again by itself, and the interrupted turn finishes.
 */
import { describe, expect, it } from "vitest";
import { FILESYSTEM } from "../mcp/mcp-helpers.js";
import { faultProject, runOf } from "./fault-project.js";
import { eventsOf, waitUntil } from "./fault-api.js";

describe("shutdown with a worker connected", () => {
  it("exits within 5 s of SIGTERM, then the worker serves the restarted daemon", async () => {
    const fp = await faultProject({ slow: { toolMs: { lookup: 3000 } }, fast: { toolMs: { lookup: 10 } } });
    fp.p.write(
      "config.yaml",
      fp.p.read("config.yaml") + `\nmcp:\n  fs:\n    command: node\n    args: [${JSON.stringify(FILESYSTEM)}, "."]\n`,
    );
    fp.p.write("agents/files.md", "---\ndescription: Lists files.\nmodel: faulty\ntools: [fs/*]\n---\nList files.\n");
    await fp.p.restart();
    await fp.p.apiOk("GET", `/v1/agents/${await fp.p.agentId("files")}`);
    const follower = fp.p.spawnCli(["events", "faulty", "--follow"]);
    const armed = await fp.watch((e) => e.type.endsWith("call.started"));
    const message = await fp.send("slow-1");
    await armed.seen;
    const asker = fp.p.spawnCli(["ask", "faulty", "fast-waiting", "--conversation", "other"]);
    // The ask has sent its message (and waits for the turn, which waits behind slow-1's), however long the CLI took to start.
    await waitUntil(
      async () => (await eventsOf(fp.d, fp.agentId)).some((e) => e.type.endsWith("message.queued") && e.data.text === "fast-waiting"),
      "the ask's message to be queued",
      30_000,
    );

    const stopped = await fp.p.stop(8000);
    expect(stopped.forced, `still running ${stopped.ms} ms after SIGTERM`).toBe(false);
    expect(stopped.ms).toBeLessThan(5000);
    const log = fp.p.daemonStderr();
    for (const step of [
      "no new requests",
      "stopping turns at a safe point",
      "telling workers the daemon is going away",
      "shutdown: done",
    ]) {
      expect(log).toContain(step);
    }
    await follower.stop("SIGKILL");
    await asker.stop("SIGKILL");

    // The same worker process reconnects by itself; the interrupted turn resumes (lookup is safe to repeat).
    await fp.restart();
    const run = runOf(await eventsOf(fp.d, fp.agentId), message);
    const end = await fp.p.waitForTurnEnd(fp.agentId, run, 30_000);
    expect(end.type).toBe("dev.wardrik.turn.completed");
    const after = await fp.p.send(fp.agentId, "fast-after-restart", "third");
    expect(after.end.type).toBe("dev.wardrik.turn.completed");
  }, 120_000);
});
