/** The small objects an agent's driver owns for its turns' working state (see agent-driver.test-d.ts for who may change them). */
import { describe, expect, it } from "vitest";
import { TurnStop } from "../../src/runtime/engine-options.js";
import { KnownConversations } from "../../src/runtime/known-conversations.js";
import { RoundState } from "../../src/runtime/round-state.js";
import { TurnProgress } from "../../src/runtime/turn-progress.js";
import { TurnStops } from "../../src/runtime/turn-stops.js";
import type { TurnRow } from "../../src/store/rows.js";

const why = (c: AbortController): string | undefined => (c.signal.reason as TurnStop | undefined)?.why;

/** An open turn row as far as KnownConversations reads it. */
const turnRow = (id: string, conversation: string, status: TurnRow["status"]): TurnRow =>
  ({ id, conversation_id: conversation, status }) as TurnRow;

describe("the turns a driver advances (TurnStops)", () => {
  it("cancels a tracked turn, leaves others running, and a release leaves a newer controller of the turn alone", () => {
    const stops = new TurnStops();
    const a = new AbortController();
    const b = new AbortController();
    const releaseA = stops.track("run_a", a);
    stops.track("run_b", b);
    stops.cancel("run_a");
    stops.cancel("run_gone");
    expect([why(a), why(b)]).toEqual(["cancelled", undefined]);
    const again = new AbortController();
    stops.track("run_a", again);
    releaseA();
    expect(stops.has("run_a")).toBe(true);
    stops.stopAll(new TurnStop("shutdown"));
    expect([why(again), why(b)]).toEqual(["shutdown", "shutdown"]);
  });
});

describe("what a driver remembers of its open turns (TurnProgress)", () => {
  it("keeps the announced iteration and the round until the turn stops here, and the parent call until it ends", () => {
    const p = new TurnProgress();
    expect(p.wasAnnounced("run_1")).toBe(false);
    p.announce("run_1", 2);
    p.rememberParentCall("run_1", "call_parent");
    p.rememberParentCall("run_2", null);
    const round = new RoundState("run_1", 1, []);
    p.saveRound("run_1", round);
    expect([p.announcedIteration("run_1"), p.round("run_1"), p.parentCall("run_1"), p.parentCall("run_2")]).toEqual([
      2,
      round,
      "call_parent",
      null,
    ]);
    p.stopped("run_1");
    expect([p.wasAnnounced("run_1"), p.round("run_1"), p.parentCall("run_1")]).toEqual([false, undefined, "call_parent"]);
    p.ended("run_1");
    expect(p.parentCall("run_1")).toBeUndefined();
    expect(p.parentCall("run_2")).toBeNull();
  });
});

describe("what a driver knows of its conversations (KnownConversations)", () => {
  it("a turn may start in the same commit only with no open turn, none starting and nothing queued", () => {
    const c = new KnownConversations();
    expect(c.canStartAt("conv_1")).toBe(true);
    c.startingTurn("conv_1");
    expect([c.isStarting("conv_1"), c.canStartAt("conv_1")]).toEqual([true, false]);
    c.notStarting("conv_1");
    c.setOpenTurn("conv_1", turnRow("run_1", "conv_1", "running"));
    expect(c.canStartAt("conv_1")).toBe(false);
    c.markQueued("conv_2");
    expect([c.mayHaveQueued("conv_2"), c.canStartAt("conv_2")]).toEqual([true, false]);
    c.clearQueued("conv_2");
    expect(c.canStartAt("conv_2")).toBe(true);
  });

  it("an ended turn clears its conversation unless a newer turn is known there; unknown turns are cleared too", () => {
    const c = new KnownConversations();
    c.setOpenTurn("conv_1", turnRow("run_2", "conv_1", "running"));
    c.turnEnded({ id: "run_1", conversation_id: "conv_1" });
    expect((c.openTurn("conv_1") as TurnRow).id).toBe("run_2");
    c.markUnknown("conv_1");
    expect(c.openTurn("conv_1")).toBe("unknown");
    c.turnEnded({ id: "run_1", conversation_id: "conv_1" });
    expect(c.hasOpenTurn("conv_1")).toBe(false);
  });

  it("a refresh replaces what no runner drives and keeps what one does; running turns and keys are found", () => {
    const c = new KnownConversations();
    c.setOpenTurn("conv_driven", turnRow("run_d", "conv_driven", "running"));
    c.setOpenTurn("conv_gone", turnRow("run_g", "conv_gone", "running"));
    c.refresh([turnRow("run_p", "conv_parked", "parked"), turnRow("run_x", "conv_driven", "parked")], (conv) => conv === "conv_driven");
    expect([c.openTurn("conv_gone"), (c.openTurn("conv_parked") as TurnRow).id, (c.openTurn("conv_driven") as TurnRow).id]).toEqual([
      undefined,
      "run_p",
      "run_d",
    ]);
    expect(c.withRunningTurn()).toEqual(["conv_driven"]);
    c.rememberKey("slack:C1", "conv_driven");
    expect([c.idOf("slack:C1"), c.keyOf("conv_driven"), c.keyOf("conv_parked")]).toEqual(["conv_driven", "slack:C1", undefined]);
  });
});
