/**
 * `wardrik daemon` stops promptly and cleanly on SIGTERM (exit 0), whether or
 * not clients have followed its event stream before. A project per case (each
 * disposed of after its test), so the cases run at once.
 */
import { describe, expect, it } from "vitest";
import { createProject } from "../helpers/spawn-daemon.js";

const PROMPT_MS = 3000;

describe.concurrent("daemon shutdown on SIGTERM", () => {
  it("exits 0 promptly when nothing happened", async (ctx) => {
    const p = await createProject({ scope: ctx });
    const s = await p.stop(PROMPT_MS + 500);
    expect(s.forced).toBe(false);
    expect(s.code).toBe(0);
    expect(s.ms).toBeLessThan(PROMPT_MS);
  });

  it("exits 0 promptly after a `wardrik ask` (an event-stream client that has gone)", async (ctx) => {
    const p = await createProject({ scope: ctx });
    const ask = await p.cli(["ask", "helper", "hello"]);
    expect(ask.code, ask.stderr).toBe(0);
    const s = await p.stop(PROMPT_MS + 500);
    expect(s.forced, `still running ${s.ms} ms after SIGTERM`).toBe(false);
    expect(s.code).toBe(0);
    expect(s.ms).toBeLessThan(PROMPT_MS);
  });

  it("exits 0 promptly while an event-stream client is still connected", async (ctx) => {
    const p = await createProject({ scope: ctx });
    const follower = p.spawnCli(["events", "helper", "--follow"], { scope: ctx });
    await follower.waitForOutput((out) => out.includes("agent.loaded"));
    const s = await p.stop(PROMPT_MS + 500);
    await follower.stop("SIGKILL");
    expect(s.forced, `still running ${s.ms} ms after SIGTERM`).toBe(false);
    expect(s.code).toBe(0);
    expect(s.ms).toBeLessThan(PROMPT_MS);
  });
});
