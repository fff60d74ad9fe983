/** Places for running turns per org: a limit per org, first come first served past it, a freed place handed to the first waiter. */
import { describe, expect, it } from "vitest";
import { OrgTurnSlots } from "../../src/runtime/org-turn-slots.js";

describe("OrgTurnSlots", () => {
  it("gives each org its own places; past the limit a turn waits and gets the first place given back", async () => {
    const slots = new OrgTurnSlots(2);
    const a1 = slots.tryTake("acme")!;
    const a2 = slots.tryTake("acme")!;
    expect(slots.tryTake("acme")).toBeUndefined();
    // Another org is not held up.
    expect(slots.tryTake("beta")).toBeDefined();

    const order: string[] = [];
    const w1 = slots.take("acme").then((s) => (order.push("w1"), s));
    const w2 = slots.take("acme").then((s) => (order.push("w2"), s));
    expect(slots.counts("acme")).toEqual({ running: 2, waiting: 2 });
    // A newcomer does not jump ahead of those waiting, even with a place about to be freed.
    a1.release();
    a1.release(); // giving back twice frees one place only
    expect(slots.tryTake("acme")).toBeUndefined();
    const s1 = await w1;
    expect(order).toEqual(["w1"]);
    a2.release();
    const s2 = await w2;
    expect(order).toEqual(["w1", "w2"]);
    s1.release();
    s2.release();
    expect(slots.counts("acme")).toEqual({ running: 0, waiting: 0 });
  });

  it("a wait given up leaves the queue and takes no place", async () => {
    const slots = new OrgTurnSlots(1);
    const held = slots.tryTake("acme")!;
    const stop = new AbortController();
    const gaveUp = slots.take("acme", stop.signal);
    stop.abort(new Error("closed"));
    await expect(gaveUp).rejects.toThrow("closed");
    expect(slots.counts("acme")).toEqual({ running: 1, waiting: 0 });
    held.release();
    expect(slots.tryTake("acme")).toBeDefined();
  });
});
