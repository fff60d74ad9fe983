/**
 * The kill harness's counts from a record and worker logs written here by
 * hand: each count sees what it names, and a clean record counts nothing.
 */
import { describe, expect, it } from "vitest";
import { LOST_ANSWER, type FaultEvent, type LogEntry } from "./fault-kit.js";
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
    const events = [
      ...turn(),
      ev("call.completed", 4, { call: "call_l" }),
      // The charge finished in the worker at 4 s, but its answer was lost: a person was asked at 6 s and approved.
      ev("approval.requested", 6, { call: "call_c", reason: LOST_ANSWER, lost: true }),
      ev("approval.granted", 7, { call: "call_c" }),
      ev("call.completed", 9, { call: "call_c" }),
      ev("turn.completed", 10, {}),
    ];
    const logs = [
      log("call_l", "lookup", "start", 3),
      log("call_l", "lookup", "end", 4),
      log("call_l", "lookup", "start", 8), // after its result was stored
      log("call_c", "charge", "start", 3),
      log("call_c", "charge", "end", 4),
      log("call_c", "charge", "start", 8, 2),
      log("call_c", "charge", "end", 9, 2),
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
});
