import { describe, expect, it } from "vitest";
import { EVENT_TYPES } from "@wardrik/protocol";
import { callMoves, FINAL_CALL_STATES, nextCall } from "../../src/runtime/call-machine.js";
import { isSafeToRepeat, recoverCall } from "../../src/runtime/recovery.js";
import { nextTurn, turnMoves } from "../../src/runtime/turn-machine.js";

describe("the turn machine", () => {
  it("allows exactly the written moves, and each keeps the open-turn counters balanced", () => {
    const moves = turnMoves();
    expect(moves.map((m) => `${m.from} -${m.input}-> ${m.move.to}`).sort()).toEqual(
      [
        "none -start-> running",
        "running -park-> parked",
        "parked -resume-> running",
        "running -complete-> completed",
        "running -fail-> failed",
        "parked -fail-> failed",
        "running -cancel-> cancelled",
        "parked -cancel-> cancelled",
      ].sort(),
    );
    for (const { from, move } of moves) {
      const open = (s: string) =>
        s === "running" ? { running: 1, parked: 0 } : s === "parked" ? { running: 0, parked: 1 } : { running: 0, parked: 0 };
      expect(move.counters).toEqual({
        running: open(move.to).running - open(from).running,
        parked: open(move.to).parked - open(from).parked,
      });
      expect(EVENT_TYPES).toContain(move.event);
    }
    expect(nextTurn("completed", "resume")).toBeUndefined();
    expect(nextTurn("parked", "complete")).toBeUndefined();
  });
});

describe("the call machine", () => {
  it("never leaves a final state, but for a call failed for lack of a worker that a worker had run", () => {
    for (const { from, input } of callMoves()) {
      if (input === "complete_late") continue;
      expect(FINAL_CALL_STATES.has(from as never), `${from} is final`).toBe(false);
    }
    expect(callMoves().filter((m) => m.input === "complete_late")).toEqual([
      { from: "failed", input: "complete_late", move: { to: "completed", events: ["call.completed"] } },
    ]);
  });

  it("records every move with known events", () => {
    for (const { move } of callMoves()) {
      expect(move.events.length).toBeGreaterThan(0);
      for (const e of move.events) expect(EVENT_TYPES).toContain(e);
    }
  });

  it("a lost call's late answer completes it; an approval lets it run again", () => {
    expect(nextCall("running", "lose")?.to).toBe("waiting");
    expect(nextCall("waiting", "complete")?.to).toBe("completed");
    expect(nextCall("waiting", "approve")?.to).toBe("approved");
    expect(nextCall("approved", "start")?.to).toBe("running");
    expect(nextCall("completed", "start")).toBeUndefined();
    expect(nextCall("killed", "complete")).toBeUndefined();
  });
});

describe("the recovery rule", () => {
  it("replays final calls, keeps waiting ones, runs approved ones", () => {
    for (const status of FINAL_CALL_STATES) expect(recoverCall({ status, retrySafe: false, answerMayArrive: true })).toBe("replay");
    expect(recoverCall({ status: "waiting", retrySafe: true, answerMayArrive: true })).toBe("keep_waiting");
    expect(recoverCall({ status: "approved", retrySafe: false, answerMayArrive: false })).toBe("run");
    expect(recoverCall({ status: "planned", retrySafe: false, answerMayArrive: false })).toBe("decide");
  });

  it("re-runs an interrupted call only when it is safe to repeat; otherwise waits for its answer or asks", () => {
    expect(recoverCall({ status: "running", retrySafe: true, answerMayArrive: true })).toBe("rerun");
    expect(recoverCall({ status: "running", retrySafe: false, answerMayArrive: true })).toBe("await_answer");
    expect(recoverCall({ status: "running", retrySafe: false, answerMayArrive: false })).toBe("ask");
  });

  it("is the seed's list exactly: files, read-only MCP tools, read-only or idempotent worker tools", () => {
    expect(isSafeToRepeat({ namespace: "files", kind: "files", readOnly: false, idempotent: false })).toBe(true);
    expect(isSafeToRepeat({ namespace: "linear", kind: "mcp", readOnly: true, idempotent: false })).toBe(true);
    // An MCP server's idempotentHint alone does not make a call safe to repeat.
    expect(isSafeToRepeat({ namespace: "linear", kind: "mcp", readOnly: false, idempotent: true })).toBe(false);
    expect(isSafeToRepeat({ namespace: "workers", kind: "workers", readOnly: false, idempotent: true })).toBe(true);
    expect(isSafeToRepeat({ namespace: "workers", kind: "workers", readOnly: true, idempotent: false })).toBe(true);
    expect(isSafeToRepeat({ namespace: "workers", kind: "workers", readOnly: false, idempotent: false })).toBe(false);
    // Run again, an agents/NAME call finds the child turn it started instead of starting another.
    expect(isSafeToRepeat({ namespace: "agents", kind: "agents", readOnly: false, idempotent: false })).toBe(true);
  });
});
