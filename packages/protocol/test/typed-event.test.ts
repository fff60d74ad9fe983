/**
 * Received events typed by the event map (the types themselves are checked
 * in typed-event.test-d.ts).
 */
import { describe, expect, it } from "vitest";
import { typedEvent, type WardrikCloudEvent } from "../src/index.js";

function wire(type: string, data: Record<string, unknown>): WardrikCloudEvent {
  return {
    specversion: "1.0",
    id: "evt_1",
    source: "/agents/agt_1",
    type,
    time: "2026-12-01T08:00:00.000Z",
    datacontenttype: "application/json",
    seq: 7,
    run: "run_1",
    data,
  };
}

describe("typedEvent", () => {
  it("keeps the envelope and shortens the type", () => {
    const e = wire("dev.wardrik.approval.denied", { call: "call_1", tool: "shop/refund", reason: "no", code: "denied", retryable: false });
    const ev = typedEvent(e);
    expect(ev).toEqual({ ...e, type: "approval.denied" });
  });

  it("is undefined for a type this version does not know (a newer daemon's)", () => {
    expect(typedEvent(wire("dev.wardrik.thing.happened", { x: 1 }))).toBeUndefined();
  });
});
