/**
 * Fault injection, kill points around a saved round: the real daemon, a real
 * worker process, SIGKILL, a restart in the same project directory.
 *
 * - after the round is saved: SIGKILL from the event stream's callback on
 *   round.saved. The round's allowed calls were committed `running` in that same
 *   transaction; the daemon may or may not have handed them to the worker in the
 *   few milliseconds before the signal lands, and both are fine: safe calls run
 *   (again) with their key, or, if one reached the worker and finished there,
 *   the restarted daemon takes the worker's answer; the unsafe one, if it reached the worker, finishes
 *   there and the worker gives its answer to the restarted daemon, else it
 *   waits for a person.
 * - while the calls run: the calls run until the test releases them (however
 *   long the restart takes on a busy machine); SIGKILL once the worker's own
 *   log shows all three started (so each is surely mid-run in the worker). The
 *   worker keeps running them through the crash (issue 10, item 17), and the
 *   restarted daemon asks it about the unsafe one: it still runs, so the daemon
 *   waits for its answer; the test then lets the calls end.
 * - twice in one turn: while the calls run, and again while the restarted
 *   daemon waits for the unsafe call the worker still runs. Each restarted
 *   daemon asks the worker and waits for that one run: nobody is asked.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { short, waitUntil } from "./fault-api.js";
import { isLostAnswer } from "./fault-settle.js";
import { callsByTool, faultProject, ofType, turnEvents, type FaultProject } from "./fault-project.js";

const SLOW = { lookup: 1500, upsert: 1500, charge: 1500 };

let f: FaultProject;
beforeAll(async () => {
  f = await faultProject({
    "after-save": { toolMs: SLOW, rerunMs: 100 },
    // Every first run lasts until released: past the restart, however long it takes.
    running: { toolMs: SLOW, rerunMs: 100, hold: ["lookup", "upsert", "charge"] },
    // The unsafe call lasts until released: past two restarts.
    twice: { toolMs: SLOW, hold: ["charge"] },
  });
});

/** The restarted daemons' "waiting for it" lines so far: each found the unsafe call still running in the worker. */
const waitingLines = () => (f.p.daemonStderr().match(/a worker still runs a call whose answer was lost; waiting for it/g) ?? []).length;

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
        // It went to the worker's connection, which then did not know it: the prompt says so.
        expect(asked.map(([call, , lost]) => [call, lost])).toEqual([[calls.charge, true]]);
        expect(ofType(turn, "approval.requested").every(isLostAnswer)).toBe(true);
        expect([...approved]).toEqual([[calls.charge, 1]]);
        expect(chargeRuns[0]!.time).toBeGreaterThanOrEqual(Date.parse(ofType(turn, "approval.granted", calls.charge)[0]!.time));
      }
      // The safe ones ran again at once, as attempt 2, with the same key; or, when the kill came late enough that one
      // reached the worker and finished there, the restarted daemon took the worker's answer: one run, no second start.
      for (const tool of ["lookup", "upsert"]) {
        const starts = ofType(turn, "call.started", calls[tool]);
        expect(new Set(starts.map((s) => s.data.idempotency_key))).toEqual(new Set([calls[tool]]));
        if (starts.length === 1) {
          const runs = f.w.log().filter((l) => l.key === calls[tool] && l.phase === "start");
          expect(runs, tool).toHaveLength(1);
          expect((ofType(turn, "call.completed", calls[tool])[0]!.data.output as { exec: number }).exec, tool).toBe(runs[0]!.exec);
        } else {
          expect(starts.map((s) => s.data.attempt)).toEqual([1, 2]);
        }
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
      const waitingBefore = waitingLines();
      const at = await f.crash();
      expect(f.logOf("running-1/").filter((l) => l.phase === "end")).toEqual([]);
      await f.restart();
      // The safe calls run again (with their keys), and the daemon waits for the unsafe one the worker still runs: the held runs may end.
      await waitUntil(
        () => f.logOf("running-1/").filter((l) => l.phase === "start").length === 5 && waitingLines() > waitingBefore,
        "the safe calls to run again and the restarted daemon to wait for the unsafe one",
        30_000,
      );
      f.w.release("running-1/");
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

  it(
    "twice in one turn: each restarted daemon asks the worker and waits for the unsafe call it still runs",
    { timeout: 120_000 },
    async () => {
      const m = await f.send("twice-1");
      const startsOf = (tool: string) => f.logOf(`twice-1/${tool}`).filter((l) => l.phase === "start");
      await waitUntil(
        () => f.logOf("twice-1/").filter((l) => l.phase === "start").length === 3,
        "three calls started in the worker",
        20_000,
        5,
      );
      // Counted from here: the earlier tests' restarts wrote such lines too.
      const before = waitingLines();
      for (const n of [1, 2]) {
        await f.crash();
        await f.restart();
        // The restarted daemon asked the worker about the unsafe call, and waits for the run in progress.
        await waitUntil(() => waitingLines() >= before + n, `restart ${n} to find the unsafe call still running in the worker`, 30_000);
      }
      f.w.release("twice-1/");
      const { events, approved } = await f.settleAndCheck([m]);
      const turn = turnEvents(events, m);

      const calls = callsByTool(turn);
      // The unsafe call: one run, through two crashes, its result stored; nobody was asked.
      expect(startsOf("charge")).toHaveLength(1);
      expect((ofType(turn, "call.completed", calls.charge)[0]!.data.output as { exec: number }).exec).toBe(startsOf("charge")[0]!.exec);
      expect(ofType(turn, "call.started", calls.charge).map((s) => s.data.attempt)).toEqual([1]);
      expect(ofType(turn, "approval.requested")).toEqual([]);
      expect(approved.size).toBe(0);
      // The safe ones completed once each, with the same key on every run (settleAndCheck checked the rest).
      for (const tool of ["lookup", "upsert"]) {
        expect(ofType(turn, "call.completed", calls[tool])).toHaveLength(1);
        expect(new Set(startsOf(tool).map((s) => s.key))).toEqual(new Set([calls[tool]]));
      }
    },
  );
});
