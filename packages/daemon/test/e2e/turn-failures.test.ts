/**
 * Turns that end badly: a model error, max_iterations, timeout, retries used up.
 * `wardrik ask` exits 1 with the reason on stderr, and the events say why.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, short, type TestProject } from "../helpers/spawn-daemon.js";

let p: TestProject;

beforeAll(async () => {
  p = await createProject({
    scripts: {
      reject400: `steps:\n  - error: { status: 400, message: "context too long for this scripted model" }\n`,
      loop: `steps:\n  - tool_calls: [{ tool: files/list, args: {} }]\n`,
      slow: `steps:\n  - text: "too late"\n    delay_ms: 10000\n`,
      flaky: `steps:\n  - error: { status: 503, message: "overloaded, try again", retry_after: 0 }\n`,
    },
    files: {
      "agents/rejected.md": agentFile({ description: "Its model answers 400", model: "reject400", tools: ["files"] }),
      "agents/looper.md": agentFile({ description: "Calls a tool forever", model: "loop", tools: ["files"], max_iterations: 3 }),
      "agents/sluggish.md": agentFile({ description: "Slower than its timeout", model: "slow", timeout: 1 }),
      "agents/flaky.md": agentFile({ description: "Its model is always overloaded", model: "flaky", retries: 1 }),
    },
  });
});

interface Turn {
  id: string;
  status: string;
  reason?: string;
  iterations: number;
  calls: { tool: string; status: string }[];
}

// Each test uses its own agent or conversation, so they run at once.
describe.concurrent("a turn that fails", () => {
  it("on a model error (HTTP 400): ask exits 1 with the reason on stderr, nothing on stdout", async () => {
    const r = await p.cli(["ask", "rejected", "hello"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/The turn failed: .*model.*400.*context too long for this scripted model/);

    const events = await p.events("rejected");
    const failed = events.find((e) => short(e.type) === "turn.failed");
    expect(failed, JSON.stringify(events.map((e) => e.type))).toBeDefined();
    expect(String(failed!.data.reason)).toContain("context too long for this scripted model");
    expect(events.some((e) => short(e.type) === "model.failed" && e.run === failed!.run)).toBe(true);
    expect(events.some((e) => short(e.type) === "turn.completed")).toBe(false);

    // The agent is usable again (idle), not stuck running.
    const show = await p.apiOk<{ status: string }>("GET", `/v1/agents/${await p.agentId("rejected")}`);
    expect(show.status).toBe("idle");
  });

  it("on max_iterations: ask --json exits 1 and prints the failed turn with its reason", async () => {
    const r = await p.cli(["ask", "looper", "go", "--json"]);
    expect(r.code).toBe(1);
    const turn = JSON.parse(r.stdout) as Turn;
    expect(turn.status).toBe("failed");
    expect(turn.reason).toMatch(/max_iterations \(3/);
    expect(turn.iterations).toBe(3);
    // Three model calls, each asked for one files/list call.
    expect(turn.calls.map((c) => `${c.tool}:${c.status}`)).toEqual([
      "files/list:completed",
      "files/list:completed",
      "files/list:completed",
    ]);
  });

  it("on max_iterations without --json: the reason is on stderr after the progress lines", async () => {
    const r = await p.cli(["ask", "looper", "again", "--conversation", "second"]);
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split("\n");
    expect(lines.filter((l) => l.includes("files/list"))).toHaveLength(3);
    expect(lines.at(-2)).toMatch(/^The turn failed: The turn reached max_iterations \(3 model calls\)/);
    expect(lines.at(-1)).toMatch(/^✗ failed in [\d.]+ m?s · 3 model calls · /);
  });

  it("on timeout: the turn fails after its timeout with a reason that names it", async () => {
    const r = await p.cli(["ask", "sluggish", "hurry", "--json"]);
    expect(r.code).toBe(1);
    const turn = JSON.parse(r.stdout) as Turn & { started_at: string; ended_at: string };
    expect(turn.status).toBe("failed");
    expect(turn.reason).toMatch(/timeout of 1 s/);
    // Ended by the 1 s timeout, not by the 10 s model delay (the daemon's own clock).
    const took = Date.parse(turn.ended_at) - Date.parse(turn.started_at);
    expect(took).toBeGreaterThanOrEqual(1000);
    expect(took).toBeLessThan(8000);
  });

  it("when the retries are used up on a transient error, the reason says how many attempts", async () => {
    const r = await p.cli(["ask", "flaky", "anyone there?"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/The turn failed: .*503.*overloaded, try again.*after 2 attempts/);
  });
});
