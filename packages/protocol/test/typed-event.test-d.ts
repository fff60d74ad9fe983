/**
 * The event map at compile time: a switch on a received event's short type
 * gives its data the fields the daemon writes, and every failure on the
 * record (a deny, a lost answer, a budget cap) carries its code and whether
 * trying again can help.
 */
import { describe, expectTypeOf, it } from "vitest";
import { typedEvent, type FailureCode, type ShortTypedEvent, type WardrikCloudEvent } from "../src/index.js";

declare const received: WardrikCloudEvent;

describe("typedEvent", () => {
  it("narrows the data by the short type", () => {
    const ev = typedEvent(received);
    expectTypeOf(ev).toEqualTypeOf<ShortTypedEvent | undefined>();
    if (ev?.type === "approval.denied") {
      expectTypeOf(ev.data.reason).toEqualTypeOf<string>();
      expectTypeOf(ev.data.code).toEqualTypeOf<FailureCode>();
      expectTypeOf(ev.data.retryable).toEqualTypeOf<boolean>();
    }
    if (ev?.type === "turn.completed") expectTypeOf(ev.data.reply).toEqualTypeOf<string>();
  });

  it("a deny decision and a lost answer are failures; an allow and a rule's ask are not", () => {
    const ev = typedEvent(received);
    if (ev?.type === "call.decided") {
      if (ev.data.decision === "deny") expectTypeOf(ev.data.code).toEqualTypeOf<FailureCode>();
      else expectTypeOf(ev.data).not.toHaveProperty("code");
    }
    if (ev?.type === "approval.requested" && ev.data.lost === true) {
      expectTypeOf(ev.data.code).toEqualTypeOf<FailureCode>();
      expectTypeOf(ev.data.retryable).toEqualTypeOf<boolean>();
    }
    if (ev?.type === "budget.exceeded") {
      expectTypeOf(ev.data.code).toEqualTypeOf<FailureCode>();
      expectTypeOf(ev.data.retryable).toEqualTypeOf<boolean>();
    }
  });
});
