/**
 * Fault injection, kill points inside model calls: the real daemon, a real worker
 * process, SIGKILL, a restart in the same project directory.
 *
 * - before the round is saved: the turn's first model call takes 1.5 s (a script
 *   step with delay_ms); SIGKILL from the event stream's callback on turn.started.
 * - during the next model call: the calls take 0.2 s, the second model call
 *   1.5 s; SIGKILL once every call.completed of the round has been seen.
 *
 * Each test also checks, from event times, that the kill landed where intended.
 * After the kill the slow model call answers at once (the script is written
 * again before the restart).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { AGENT, faultScript, type TurnShape } from "./fault-agent.js";
import { short } from "./fault-api.js";
import { callsByTool, faultProject, ofType, turnEvents, type FaultProject } from "./fault-project.js";

const shapes: Record<string, TurnShape> = {
  "before-save": { model1Ms: 1500, toolMs: { lookup: 100, upsert: 100, charge: 100 } },
  "next-model": { model2Ms: 1500, toolMs: { lookup: 200, upsert: 200, charge: 200 } },
};

let f: FaultProject;
beforeAll(async () => {
  f = await faultProject(shapes);
});

/** After the kill, the model calls of `prefix` answer at once: the slow call was needed only for the kill to land in it. */
function quickAfterTheKill(prefix: string): void {
  shapes[prefix] = { ...shapes[prefix], model1Ms: 0, model2Ms: 0 };
  f.p.write(`scripts/${AGENT}.yaml`, faultScript({}, shapes));
}

const startsOf = (key: string) => f.w.log().filter((l) => l.key === key && l.phase === "start");

describe("SIGKILL during a model call", () => {
  it(
    "before the round is saved (the turn's first model call): the model is called again and each call runs once",
    { timeout: 60_000 },
    async () => {
      const kill = await f.armKill((e) => short(e.type) === "turn.started");
      const m = await f.send("before-save-1");
      const { at } = await kill.fired;
      quickAfterTheKill("before-save");
      await f.restart();
      const { events, approved } = await f.settleAndCheck([m]);
      const turn = turnEvents(events, m);

      // The kill landed before the round was saved: the round and every model reply are from after the restart.
      const saved = ofType(turn, "round.saved");
      expect(saved).toHaveLength(1);
      expect(Date.parse(saved[0]!.time)).toBeGreaterThan(at);
      for (const r of ofType(turn, "model.replied")) expect(Date.parse(r.time)).toBeGreaterThan(at);
      expect(ofType(turn, "model.replied").map((r) => r.data.iteration)).toEqual([1, 2]);
      // Nothing had run before the crash: every call ran exactly once, and nobody was asked.
      expect(approved.size).toBe(0);
      for (const id of Object.values(callsByTool(turn))) expect(startsOf(id)).toHaveLength(1);
      expect(ofType(turn, "turn.completed")).toHaveLength(1);
    },
  );

  it("during the next model call: completed calls keep their results and the model is called again", { timeout: 60_000 }, async () => {
    const kill = await f.armKill((_e, seen) => ofType(seen, "call.completed").length === 3);
    const m = await f.send("next-model-1");
    const { at } = await kill.fired;
    quickAfterTheKill("next-model");
    await f.restart();
    const { events, approved } = await f.settleAndCheck([m]);
    const turn = turnEvents(events, m);

    const calls = callsByTool(turn);
    // Every result was stored before the crash...
    for (const id of Object.values(calls)) {
      const done = ofType(turn, "call.completed", id);
      expect(done).toHaveLength(1);
      // (The kill can fire in the millisecond the last result was stamped.)
      expect(Date.parse(done[0]!.time)).toBeLessThanOrEqual(at);
    }
    // ...so no call ran again (not even the safe ones) and nothing waited for a person.
    expect(approved.size).toBe(0);
    for (const id of Object.values(calls)) expect(startsOf(id)).toHaveLength(1);
    for (const id of Object.values(calls)) expect(ofType(turn, "call.started", id)).toHaveLength(1);
    // The second model call was cut off and made again after the restart: its one reply is from after the kill.
    const second = ofType(turn, "model.replied").filter((r) => r.data.iteration === 2);
    expect(second).toHaveLength(1);
    expect(Date.parse(second[0]!.time)).toBeGreaterThan(at);
    const end = ofType(turn, "turn.completed");
    expect(end).toHaveLength(1);
    expect(end[0]!.data.reply).toBe("done next-model-1");
  });
});
