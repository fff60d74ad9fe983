/**
 * The kill harness's counts from a record and worker logs written here by
 * hand: each count sees what it names, and a clean record counts nothing.
 */
import { describe, expect, it } from "vitest";
import { LOST_ANSWER } from "../../src/runtime/types.js";
import type { FaultEvent } from "./fault-api.js";
import type { LogEntry } from "./fault-worker-process.js";
import { countFaults, NO_COUNTS } from "./fault-ledger.js";

const T = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
const ms = (s: number) => Date.parse(T(s));
let seq = 0;
const ev = (type: string, s: number, data: Record<string, unknown>, run = "run_1"): FaultEvent => ({
  seq: ++seq,
  type: `dev.wardrik.${type}`,
  time: T(s),
  run,
  data,
});
const log = (key: string, tool: LogEntry["tool"], phase: LogEntry["phase"], s: number, pid = 1): LogEntry => ({
  key,
  tool,
  phase,
  pid,
  time: ms(s),
  tag: `m/${tool}`,
  exec: 1,
});

/** One turn of message msg_1 with a saved round of a lookup (call_l) and a charge (call_c). */
function turn(): FaultEvent[] {
  return [
    ev("message.queued", 0, { message: "msg_1" }),
    ev("turn.started", 1, { messages: ["msg_1"] }),
    ev("round.saved", 2, {
      calls: [
        { call: "call_l", tool: "workers/lookup", read_only: true, idempotent: false },
        { call: "call_c", tool: "workers/charge", read_only: false, idempotent: false },
      ],
    }),
  ];
}

/** The turn, with its charge's answer lost: a person asked at 6 s approved, and the charge completed at 9 s. */
function chargeAskedAndApproved(): FaultEvent[] {
  return [
    ...turn(),
    ev("call.completed", 4, { call: "call_l" }),
    ev("approval.requested", 6, { call: "call_c", reason: LOST_ANSWER, lost: true }),
    ev("approval.granted", 7, { call: "call_c" }),
    ev("call.completed", 9, { call: "call_c" }),
    ev("turn.completed", 10, {}),
  ];
}

/** The charge finished at 4 s in process 1, and ran again (approved) at 8 s in process 2. */
const CHARGE_TWICE = [
  log("call_c", "charge", "start", 3),
  log("call_c", "charge", "end", 4),
  log("call_c", "charge", "start", 8, 2),
  log("call_c", "charge", "end", 9, 2),
];

describe("countFaults", () => {
  it("counts nothing for a turn whose calls each ran once", () => {
    const events = [
      ...turn(),
      ev("call.completed", 4, { call: "call_l" }),
      ev("call.completed", 4, { call: "call_c" }),
      ev("turn.completed", 5, {}),
    ];
    const logs = [
      log("call_l", "lookup", "start", 3),
      log("call_l", "lookup", "end", 4),
      log("call_c", "charge", "start", 3),
      log("call_c", "charge", "end", 4),
    ];
    expect(countFaults({ events, logs, accepted: ["msg_1"] })).toEqual({ ...NO_COUNTS, accepted: 1 });
  });

  it("sees a lost message, a completed call run again, a person asked about a finished call, and its effect twice", () => {
    // The charge finished in the worker at 4 s, but its answer was lost: a person was asked at 6 s and approved.
    const events = chargeAskedAndApproved();
    const logs = [
      log("call_l", "lookup", "start", 3),
      log("call_l", "lookup", "end", 4),
      log("call_l", "lookup", "start", 8), // after its result was stored
      ...CHARGE_TWICE,
    ];
    const c = countFaults({ events, logs, accepted: ["msg_1", "msg_2"] });
    expect(c).toMatchObject({ accepted: 2, lost: 1, completed_reruns: 1, asked: 1, asked_about_finished: 1, effects_run_twice: 1 });
    // Approved: a second run of the charge is not one without approval.
    expect(c.unsafe_reruns_without_approval).toBe(0);
  });

  it("sees an unsafe call that ran twice with nobody asked", () => {
    const events = [...turn(), ev("call.completed", 9, { call: "call_c" }), ev("turn.completed", 10, {})];
    const logs = [log("call_c", "charge", "start", 3), log("call_c", "charge", "start", 5, 2), log("call_c", "charge", "end", 9, 2)];
    expect(countFaults({ events, logs, accepted: ["msg_1"] })).toMatchObject({ unsafe_reruns_without_approval: 1, effects_run_twice: 0 });
  });

  it("takes a policy's ask, granted, as leave to run once: a second run needs an approval of a lost answer", () => {
    const asked = [
      ...turn(),
      ev("approval.requested", 3, { call: "call_c", reason: "A person approves every charge", rule: "workers/charge", lost: false }),
      ev("approval.granted", 4, { call: "call_c" }),
      ev("call.completed", 9, { call: "call_c" }),
      ev("turn.completed", 10, {}),
    ];
    const twice = [log("call_c", "charge", "start", 5), log("call_c", "charge", "start", 6, 2), log("call_c", "charge", "end", 9, 2)];
    expect(countFaults({ events: asked, logs: twice, accepted: ["msg_1"] })).toMatchObject({ unsafe_reruns_without_approval: 1, asked: 0 });
    expect(countFaults({ events: asked, logs: twice.slice(0, 1), accepted: ["msg_1"] }).unsafe_reruns_without_approval).toBe(0);
  });

  it("tells a call whose worker died before recording it finished (nothing could know) from one a worker had recorded", () => {
    const events = chargeAskedAndApproved();
    // Process 1 was killed after the charge's end, before its record reached the file.
    const logs = [log("call_l", "lookup", "start", 3), log("call_l", "lookup", "end", 4), ...CHARGE_TWICE];
    const accepted = ["msg_1"];
    // Only the approved second run was recorded (at 9 s): the ask and the second effect could not have been avoided.
    const unrecorded = countFaults({ events, logs, accepted, recorded: new Map([["call_c", [ms(9)]]]) });
    expect(unrecorded).toMatchObject({ asked: 1, asked_about_finished: 0, asked_about_unrecorded: 1, effects_run_twice: 0 });
    expect(unrecorded.effects_run_twice_unrecorded).toBe(1);
    // The first run's record was on disk at 5 s: a worker could have answered, so both count as failures.
    const known = countFaults({ events, logs, accepted, recorded: new Map([["call_c", [ms(5), ms(9)]]]) });
    expect(known).toMatchObject({
      asked_about_finished: 1,
      asked_about_unrecorded: 0,
      effects_run_twice: 1,
      effects_run_twice_unrecorded: 0,
    });
  });

  it("reads each call's runs in time order, whatever order the workers' log files were read in", () => {
    // Seed 81006: the worker that ran the approved second charge had its file read first.
    const logs = [...CHARGE_TWICE.slice(2), ...CHARGE_TWICE.slice(0, 2)];
    const c = countFaults({ events: chargeAskedAndApproved(), logs, accepted: ["msg_1"], recorded: new Map([["call_c", [ms(9)]]]) });
    expect(c).toMatchObject({ asked_about_unrecorded: 1, effects_run_twice: 0, effects_run_twice_unrecorded: 1 });
  });
});
