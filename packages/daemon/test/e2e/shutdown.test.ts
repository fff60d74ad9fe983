/**
 * `wardrik daemon` stops promptly and cleanly on SIGTERM (exit 0), whether or
 * not clients have followed its event stream before.
 */
import { describe, expect, it } from "vitest";
import { createProject } from "../helpers/spawn-daemon.js";

const PROMPT_MS = 3000;

describe("daemon shutdown on SIGTERM", () => {
  it("exits 0 promptly when nothing happened", async () => {
    const p = await createProject();
    const s = await p.stop(PROMPT_MS + 2000);
    expect(s.forced).toBe(false);
    expect(s.code).toBe(0);
    expect(s.ms).toBeLessThan(PROMPT_MS);
  });

  it("exits 0 promptly after a `wardrik ask` (an event-stream client that has gone)", async () => {
    const p = await createProject();
    const ask = await p.cli(["ask", "helper", "hello"]);
    expect(ask.code, ask.stderr).toBe(0);
    const s = await p.stop(PROMPT_MS + 2000);
    expect(s.forced, `still running ${s.ms} ms after SIGTERM`).toBe(false);
    expect(s.code).toBe(0);
    expect(s.ms).toBeLessThan(PROMPT_MS);
  });

  it("exits 0 promptly while an event-stream client is still connected", async () => {
    const p = await createProject();
    const follower = p.spawnCli(["events", "helper", "--follow"]);
    await follower.waitForOutput((out) => out.includes("agent.loaded"));
    const s = await p.stop(PROMPT_MS + 2000);
    await follower.stop("SIGKILL");
    expect(s.forced, `still running ${s.ms} ms after SIGTERM`).toBe(false);
    expect(s.code).toBe(0);
    expect(s.ms).toBeLessThan(PROMPT_MS);
  });
});
