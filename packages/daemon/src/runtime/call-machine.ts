import type { EventType } from "@wardrik/protocol";
import type { CallStatus } from "../store/rows.js";

/**
 * The lifecycle of a tool call, written down once.
 *
 * A round is saved with every call decided (`new` is the call before it is
 * saved): allowed calls are saved `running` and start right after the
 * commit; calls that need a person wait; denied and invalid ones end at once.
 *
 *   new --allow--> running --complete--> completed
 *   new --ask----> waiting --approve---> approved --start--> running
 *   new --deny---> denied     waiting --refuse--> denied
 *   new --invalid> failed     running --fail----> failed
 *                             running --time_out> timed_out
 *                             running --retry---> running      (a safe call, new attempt, same key)
 *                             running --retry_after_timeout--> running (a safe call that timed out, once)
 *                             running --lose----> waiting      (may have run; a person decides)
 *                             waiting --complete> completed    (the lost answer arrived after all)
 *   running|approved --ask_person--> waiting (a person/ask call: its question waits for an answer)
 *                             waiting --answer--> completed    (a person answered the question)
 *                             failed --complete_late--> completed (failed for lack of a worker, but a worker
 *                                                        had run it: its late answer says what happened)
 *   planned (saved undecided by state format 1) --allow|ask|deny|invalid--> as from new, allow gives approved
 *   any open state --kill--> killed
 *
 * An agents/NAME call (a sub-agent, runtime/sub-agent-call.ts) adds no row:
 * allowed, it is `running` while its child turn runs, and that turn's end
 * completes or fails it; killed, or its turn ending, it cancels the child
 * turn; interrupted by a restart, it is safe to repeat (retry) and its new
 * attempt finds the same child turn instead of starting another.
 *
 * Final states: completed, failed, denied, killed, timed_out. A final call
 * never runs again: after a crash its saved result is replayed to the model.
 * It never changes again either, with one exception: a call that failed
 * because no worker served it, whose earlier attempt a worker had in fact
 * finished, becomes completed when that worker's answer arrives.
 */
export type CallState = CallStatus;
export type CallInput =
  | "allow"
  | "ask"
  | "deny"
  | "invalid"
  | "approve"
  | "refuse"
  | "start"
  | "retry"
  | "retry_after_timeout"
  | "complete"
  | "fail"
  | "time_out"
  | "lose"
  | "complete_late"
  | "ask_person"
  | "answer"
  | "kill";

export interface CallMove {
  to: CallState;
  /** The events that record the move, in order. */
  events: EventType[];
}

type From = CallState | "new";

const OPEN: readonly CallState[] = ["planned", "waiting", "approved", "running"];
export const FINAL_CALL_STATES: ReadonlySet<CallState> = new Set(["completed", "failed", "denied", "killed", "timed_out"]);

const MOVES: Record<CallInput, Partial<Record<From, CallMove>>> = {
  allow: {
    new: { to: "running", events: ["call.decided", "call.started"] },
    planned: { to: "approved", events: ["call.decided"] },
  },
  ask: {
    new: { to: "waiting", events: ["call.decided", "approval.requested"] },
    planned: { to: "waiting", events: ["call.decided", "approval.requested"] },
  },
  deny: {
    new: { to: "denied", events: ["call.decided"] },
    planned: { to: "denied", events: ["call.decided"] },
  },
  invalid: {
    new: { to: "failed", events: ["call.failed"] },
    planned: { to: "failed", events: ["call.failed"] },
  },
  approve: { waiting: { to: "approved", events: ["approval.granted"] } },
  refuse: { waiting: { to: "denied", events: ["approval.denied"] } },
  start: { approved: { to: "running", events: ["call.started"] } },
  retry: { running: { to: "running", events: ["call.retried", "call.started"] } },
  retry_after_timeout: { running: { to: "running", events: ["call.timed_out", "call.started"] } },
  complete: {
    running: { to: "completed", events: ["call.completed"] },
    waiting: { to: "completed", events: ["call.completed"] },
    approved: { to: "completed", events: ["call.completed"] },
  },
  fail: {
    running: { to: "failed", events: ["call.failed"] },
    approved: { to: "failed", events: ["call.failed"] },
    waiting: { to: "failed", events: ["call.failed"] },
  },
  time_out: { running: { to: "timed_out", events: ["call.timed_out"] } },
  lose: { running: { to: "waiting", events: ["approval.requested"] } },
  complete_late: { failed: { to: "completed", events: ["call.completed"] } },
  ask_person: {
    running: { to: "waiting", events: ["question.asked"] },
    approved: { to: "waiting", events: ["question.asked"] },
  },
  answer: { waiting: { to: "completed", events: ["question.answered", "call.completed"] } },
  kill: Object.fromEntries(OPEN.map((s) => [s, { to: "killed", events: ["call.killed"] }])),
};

/** The move `input` makes from `from`, or undefined when the lifecycle does not allow it. */
export function nextCall(from: From, input: CallInput): CallMove | undefined {
  return MOVES[input][from];
}

export function isFinalCall(state: CallState): boolean {
  return FINAL_CALL_STATES.has(state);
}

/** Every (state, input) pair the lifecycle allows, for tests and docs. */
export function callMoves(): { from: From; input: CallInput; move: CallMove }[] {
  return (Object.entries(MOVES) as [CallInput, Partial<Record<From, CallMove>>][]).flatMap(([input, byFrom]) =>
    (Object.entries(byFrom) as [From, CallMove][]).map(([from, move]) => ({ from, input, move })),
  );
}
