import type { EventType } from "@wardrik/protocol";
import type { TurnStatusValue } from "../store/rows.js";

/**
 * The lifecycle of a turn, written down once.
 *
 *            start            complete | fail | cancel
 *   (none) --------> running ---------------------------> completed | failed | cancelled
 *                     |   ^
 *               park  |   | resume (a decision came)
 *                     v   |
 *                    parked ---- fail | cancel ----------> failed | cancelled
 *
 * A turn is `running` while a driver advances it (model calls, rounds) and
 * `parked` while a call of its last round waits for a person. Each move
 * emits one event and changes the agent's open-turn counters, from which its
 * running/parked status is derived.
 */
export type TurnState = TurnStatusValue;
export type TurnInput = "start" | "park" | "resume" | "complete" | "fail" | "cancel";

export interface TurnMove {
  to: TurnState;
  event: Extract<EventType, `turn.${string}`>;
  /** Change of the agent's running and parked turn counters. */
  counters: { running: number; parked: number };
}

type From = TurnState | "none";

const MOVES: Record<TurnInput, Partial<Record<From, TurnMove>>> = {
  start: { none: { to: "running", event: "turn.started", counters: { running: 1, parked: 0 } } },
  park: { running: { to: "parked", event: "turn.parked", counters: { running: -1, parked: 1 } } },
  resume: { parked: { to: "running", event: "turn.resumed", counters: { running: 1, parked: -1 } } },
  complete: { running: { to: "completed", event: "turn.completed", counters: { running: -1, parked: 0 } } },
  fail: {
    running: { to: "failed", event: "turn.failed", counters: { running: -1, parked: 0 } },
    parked: { to: "failed", event: "turn.failed", counters: { running: 0, parked: -1 } },
  },
  cancel: {
    running: { to: "cancelled", event: "turn.cancelled", counters: { running: -1, parked: 0 } },
    parked: { to: "cancelled", event: "turn.cancelled", counters: { running: 0, parked: -1 } },
  },
};

/** The move `input` makes from `from`, or undefined when the lifecycle does not allow it. */
export function nextTurn(from: From, input: TurnInput): TurnMove | undefined {
  return MOVES[input][from];
}

export function isOpenTurn(state: TurnState): boolean {
  return state === "running" || state === "parked";
}

/** Every (state, input) pair the lifecycle allows, for tests and docs. */
export function turnMoves(): { from: From; input: TurnInput; move: TurnMove }[] {
  return (Object.entries(MOVES) as [TurnInput, Partial<Record<From, TurnMove>>][]).flatMap(([input, byFrom]) =>
    (Object.entries(byFrom) as [From, TurnMove][]).map(([from, move]) => ({ from, input, move })),
  );
}
