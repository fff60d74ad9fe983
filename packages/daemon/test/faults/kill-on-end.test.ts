/**
 * Fault injection, kill point "between a call's end and its result being
 * stored": the call finished in the worker, but the daemon died before it
 * stored the result.
 *
 * How it is hit: the test cannot be fast enough to land a SIGKILL between the
 * worker's answer and the daemon's commit, so the worker does it. The test
 * writes a kill order (the daemon's pid and the target tool) to a file the
 * worker reads; the target execution logs "end", SIGKILLs the daemon and only
 * then returns its result, which never reaches a live daemon. So the worker's
 * record has the "end" and the daemon's record has no result: exactly the window.
 * The worker keeps that answer and gives it to the restarted daemon right after
 * it reconnects, so the call completes with the run it had (issue 10, item 17):
 * it never runs twice and nobody is asked.
 *
 * The round's other two calls are quick and stored before the kill (the test
 * waits for their call.completed before writing the order): they must keep
 * their results and never run again.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { TOOLS, type FaultTool, type TurnShape } from "./fault-agent.js";
import { callsByTool, faultProject, ofType, turnEvents, type FaultProject } from "./fault-project.js";

let f: FaultProject;
beforeAll(async () => {
  const shapes: Record<string, TurnShape> = {};
  // The target runs until the test has ordered the kill on its end and releases it (however slow the machine).
  for (const t of TOOLS) shapes[`end-${t}`] = { toolMs: { lookup: 100, upsert: 100, charge: 100 }, rerunMs: 100, hold: [t] };
  f = await faultProject(shapes);
});

describe("SIGKILL after a call ended in the worker, before its result was stored", () => {
  it.each(TOOLS.map((t) => [t]))("%s", { timeout: 60_000 }, async (target: FaultTool) => {
    const others = TOOLS.filter((t) => t !== target);
    const prefix = `end-${target}-1`;
    const { seen } = await f.watch((_e, all) => ofType(all, "call.completed").length === 2);
    const m = await f.send(prefix);
    await seen;
    // The two quick calls are stored; the target still runs. Order the kill on its end.
    expect(f.logOf(`${prefix}/${target}`).some((l) => l.phase === "end")).toBe(false);
    f.w.killOnEnd({ pid: f.d.pid!, tag: `${prefix}/${target}` });
    f.w.release(`${prefix}/${target}`);
    await f.d.waitForExit(20_000);
    const ended = f.logOf(`${prefix}/${target}`).find((l) => l.phase === "end")!;
    expect(ended).toBeDefined();
    await f.restart();
    const { events, approved, report } = await f.settleAndCheck([m]);
    const turn = turnEvents(events, m);

    const calls = callsByTool(turn);
    const runs = (tool: string) => f.w.log().filter((l) => l.key === calls[tool] && l.phase === "start");
    // Completed calls keep their results: stored before the kill, never run again.
    for (const tool of others) {
      expect(runs(tool), tool).toHaveLength(1);
      const done = ofType(turn, "call.completed", calls[tool]);
      expect(done).toHaveLength(1);
      expect(Date.parse(done[0]!.time)).toBeLessThan(ended.time);
      expect(ofType(turn, "call.started", calls[tool])).toHaveLength(1);
    }
    // The target's run finished before the kill; the worker kept its answer and gave it to the
    // restarted daemon. It ran once, that run is the stored result, and nobody was asked (a safe
    // target sent again by the recovery got the same answer from the worker, without a second run).
    const targetRuns = runs(target);
    expect(targetRuns).toHaveLength(1);
    expect(targetRuns[0]!.exec).toBe(ended.exec);
    const done = ofType(turn, "call.completed", calls[target]);
    expect(done).toHaveLength(1);
    expect((done[0]!.data.output as { exec: number }).exec).toBe(ended.exec);
    expect(report.stats.lost_results).toBe(0);
    expect(approved.size).toBe(0);
    expect(ofType(turn, "approval.requested", calls[target])).toEqual([]);
  });
});
