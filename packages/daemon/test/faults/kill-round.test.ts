/**
 * Fault injection, kill points around a saved round: the real daemon, a real
 * worker process, SIGKILL, a restart in the same project directory.
 *
 * - after the round is saved: SIGKILL from the event stream's callback on
 *   round.saved. The round's allowed calls were committed `running` in that same
 *   transaction; the daemon may or may not have handed them to the worker in the
 *   few milliseconds before the signal lands, and both are fine: safe calls run
 *   (again) with their key; the unsafe one, if it reached the worker, finishes
 *   there and the worker gives its answer to the restarted daemon, else it
 *   waits for a person.
 * - while the calls run: the calls take 1.5 s; SIGKILL once the worker's own log
 *   shows all three started (so each is surely mid-run in the worker). The
 *   worker keeps running them through the crash (issue 10, item 17).
 * - twice in one turn: while the calls run, and again while the approved
 *   re-run of the unsafe call runs. Its runs outlast the daemon's wait for a
 *   reconnecting worker's answer, so each crash really loses the answer.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { LOST_ANSWER, short, waitUntil } from "./fault-kit.js";
import { callsByTool, faultProject, ofType, turnEvents, type FaultProject } from "./fault-project.js";

const SLOW = { lookup: 1500, upsert: 1500, charge: 1500 };
/** Longer than the restarted daemon waits for a reconnecting worker's answer (5 s from its start). */
const OUTLASTS_GRACE = { ...SLOW, charge: 15_000 };

let f: FaultProject;
beforeAll(async () => {
  f = await faultProject({
    "after-save": { toolMs: SLOW, rerunMs: 100 },
    running: { toolMs: SLOW, rerunMs: 100 },
    twice: { toolMs: OUTLASTS_GRACE },
  });
});

describe("SIGKILL around a saved round", () => {
  it(
    "after the round is saved: safe calls run with their keys; the unsafe one runs once, or waits with the lost-answer reason if it never reached the worker",
    { timeout: 60_000 },
    async () => {
      const kill = await f.armKill((e) => short(e.type) === "round.saved");
      const m = await f.send("after-save-1");
      const { at } = await kill.fired;
      await f.restart();
      const { events, approved } = await f.settleAndCheck([m]);
      const turn = turnEvents(events, m);

      const calls = callsByTool(turn);
      expect(Date.parse(ofType(turn, "round.saved")[0]!.time)).toBeLessThan(at);
      for (const id of Object.values(calls)) {
        const done = ofType(turn, "call.completed", id);
        expect(done).toHaveLength(1);
        expect(Date.parse(done[0]!.time)).toBeGreaterThan(at);
      }
      // The unsafe call was committed running. If it reached the worker before the kill, the worker
      // finished it and gave its answer to the restarted daemon: one run, nobody asked. If it did not,
      // no answer came, so it waited for a person with the lost-answer reason and ran once approved.
      const chargeRuns = f.w.log().filter((l) => l.key === calls.charge && l.phase === "start");
      expect(chargeRuns).toHaveLength(1);
      const asked = ofType(turn, "approval.requested").map((e) => [e.data.call, e.data.reason, e.data.lost]);
      if (asked.length === 0) {
        expect(approved.size).toBe(0);
        expect((ofType(turn, "call.completed", calls.charge)[0]!.data.output as { exec: number }).exec).toBe(chargeRuns[0]!.exec);
      } else {
        expect(asked).toEqual([[calls.charge, LOST_ANSWER, true]]);
        expect([...approved]).toEqual([[calls.charge, 1]]);
        expect(chargeRuns[0]!.time).toBeGreaterThanOrEqual(Date.parse(ofType(turn, "approval.granted", calls.charge)[0]!.time));
      }
      // The safe ones ran again at once, as attempt 2, with the same key.
      for (const tool of ["lookup", "upsert"]) {
        const starts = ofType(turn, "call.started", calls[tool]);
        expect(starts.map((s) => s.data.attempt)).toEqual([1, 2]);
        expect(new Set(starts.map((s) => s.data.idempotency_key))).toEqual(new Set([calls[tool]]));
      }
      // Whatever reached the worker before the kill ran at most twice in all.
      for (const id of Object.values(calls))
        expect(f.w.log().filter((l) => l.key === id && l.phase === "start").length).toBeLessThanOrEqual(2);
    },
  );

  it(
    "while calls run: safe calls ran again with their key; the unsafe one ran once, its answer kept by the worker",
    { timeout: 60_000 },
    async () => {
      const m = await f.send("running-1");
      // The worker's own record: all three are running in the worker.
      await waitUntil(
        () => f.logOf("running-1/").filter((l) => l.phase === "start").length === 3,
        "three calls started in the worker",
        20_000,
        5,
      );
      const at = await f.crash();
      expect(f.logOf("running-1/").filter((l) => l.phase === "end")).toEqual([]);
      await f.restart();
      const { events, approved } = await f.settleAndCheck([m]);
      const turn = turnEvents(events, m);

      const calls = callsByTool(turn);
      const log = f.w.log();
      for (const tool of ["lookup", "upsert"]) {
        const id = calls[tool]!;
        const starts = log.filter((l) => l.key === id && l.phase === "start");
        expect(starts, tool).toHaveLength(2);
        expect(starts.every((s) => s.tag === `running-1/${tool}`)).toBe(true);
        // The stored result is the second run's: the restarted daemon ran it again at once, which stopped the first.
        const done = ofType(turn, "call.completed", id);
        expect(done).toHaveLength(1);
        expect(Date.parse(done[0]!.time)).toBeGreaterThan(at);
        expect((done[0]!.data.output as { exec: number }).exec).toBe(starts[1]!.exec);
      }
      // The unsafe call kept running in the worker through the crash; the worker gave its answer to the
      // restarted daemon, which was waiting for it: one run, its result stored, nobody asked.
      const chargeRuns = log.filter((l) => l.key === calls.charge && l.phase === "start");
      expect(chargeRuns).toHaveLength(1);
      const charged = ofType(turn, "call.completed", calls.charge);
      expect(charged).toHaveLength(1);
      expect((charged[0]!.data.output as { exec: number }).exec).toBe(chargeRuns[0]!.exec);
      expect(approved.size).toBe(0);
      expect(ofType(turn, "approval.requested")).toEqual([]);
    },
  );

  it("twice in one turn: calls re-run each time with the same key, the unsafe one once per approval", { timeout: 80_000 }, async () => {
    const m = await f.send("twice-1");
    const startsOf = (tool: string) => f.logOf(`twice-1/${tool}`).filter((l) => l.phase === "start");
    await waitUntil(
      () => f.logOf("twice-1/").filter((l) => l.phase === "start").length === 3,
      "three calls started in the worker",
      20_000,
      5,
    );
    await f.crash();
    await f.restart();
    // The safe calls re-run by themselves; the unsafe one waits for a person. Approve it, then crash again while it re-runs.
    const asked = await waitUntil(
      async () => ofType(turnEvents(await f.p.events(f.agentId), m), "approval.requested")[0],
      "the lost-answer approval request",
    );
    expect(asked.data.reason).toBe(LOST_ANSWER);
    await f.p.apiOk("POST", `/v1/agents/${f.agentId}/calls/${String(asked.data.call)}/approve`);
    await waitUntil(() => startsOf("charge").length === 2, "the approved re-run to start in the worker", 20_000, 5);
    const at2 = await f.crash();
    await f.restart();
    const { events, approved } = await f.settleAndCheck([m]);
    const turn = turnEvents(events, m);

    const calls = callsByTool(turn);
    // The unsafe call: run, lost, approved, run, lost again, approved again, run: each run after its own approval.
    expect(startsOf("charge")).toHaveLength(3);
    expect(ofType(turn, "approval.requested", calls.charge).map((e) => e.data.reason)).toEqual([LOST_ANSWER, LOST_ANSWER]);
    expect(ofType(turn, "approval.granted", calls.charge)).toHaveLength(2);
    expect(approved.get(calls.charge!)).toBe(1);
    expect(ofType(turn, "call.started", calls.charge).map((s) => s.data.attempt)).toEqual([1, 2, 3]);
    // A safe call whose re-run was stored before the second crash kept that result; one still running ran a third time.
    for (const tool of ["lookup", "upsert"]) {
      const done = ofType(turn, "call.completed", calls[tool]);
      expect(done).toHaveLength(1);
      expect(startsOf(tool).length, tool).toBe(Date.parse(done[0]!.time) < at2 ? 2 : 3);
    }
  });
});
