/**
 * What the event relay remembers of other nodes' followers: which agents
 * each wants, what is new in an announcement (for the catch-up notice), and
 * that a node gone quiet is forgotten. Also the bus's side: which agents its
 * poke listeners want, and that it says when that changes.
 */
import { describe, expect, it } from "vitest";
import { formatInterest, OtherNodesInterest, parseInterest } from "../../src/cluster/follower-interest.js";
import { EventBus } from "../../src/events/event-bus.js";

describe("other nodes' interest", () => {
  it("announcements round-trip: every agent, some, none; every type or some; the older form means every type", () => {
    for (const text of ["+*?*", "+*?agt_1,agt_2", "+*?", "+turn.completed,call.*?*", "+turn.started?agt_1"])
      expect(formatInterest(parseInterest(text))).toBe(text);
    expect(parseInterest("?agt_1")).toEqual({ all: false, agents: new Set(["agt_1"]) });
    expect(parseInterest("?*")).toEqual({ all: true, agents: new Set() });
    expect(parseInterest("+call.*?agt_1").types).toEqual(["call.*"]);
  });

  it("wants only the types a node's followers show, and counts a widening of types as all new", () => {
    const i = new OtherNodesInterest(1000);
    i.set("n2", parseInterest("+turn.completed,call.*?*"), 0);
    expect(i.wants("agt_1", "dev.wardrik.turn.completed", 1)).toBe(true);
    expect(i.wants("agt_1", "dev.wardrik.call.started", 1)).toBe(true);
    expect(i.wants("agt_1", "dev.wardrik.round.saved", 1)).toBe(false);
    // Narrower types: no catch-up. Wider: everything it wants is new.
    expect(i.set("n2", parseInterest("+turn.completed?*"), 2).all).toBe(false);
    expect(i.set("n2", parseInterest("+turn.completed,round.saved?*"), 3).all).toBe(true);
    expect(i.set("n3", parseInterest("+turn.completed?agt_1,agt_2"), 4).agents).toEqual(new Set(["agt_1", "agt_2"]));
    expect(i.set("n3", parseInterest("+turn.completed?agt_1,agt_2,agt_3"), 5).agents).toEqual(new Set(["agt_3"]));
    expect(i.set("n3", parseInterest("+*?agt_1,agt_2,agt_3"), 6).agents).toEqual(new Set(["agt_1", "agt_2", "agt_3"]));
  });

  it("wants only what some live node follows, and names what an announcement adds", () => {
    const i = new OtherNodesInterest(1000);
    expect(i.wants("agt_1", "dev.wardrik.turn.started", 0)).toBe(false);
    expect([...i.set("n2", parseInterest("+*?agt_1,agt_2"), 0).agents]).toEqual(["agt_1", "agt_2"]);
    expect(i.wants("agt_1", "dev.wardrik.turn.started", 10)).toBe(true);
    expect(i.wants("agt_3", "dev.wardrik.turn.started", 10)).toBe(false);
    // Whole state each time: agt_1 dropped, agt_3 new.
    expect([...i.set("n2", parseInterest("+*?agt_2,agt_3"), 20).agents]).toEqual(["agt_3"]);
    expect(i.wants("agt_1", "dev.wardrik.turn.started", 30)).toBe(false);
    expect(i.set("n3", parseInterest("+*?*"), 40)).toEqual({ all: true, agents: new Set() });
    expect(i.wants("agt_9", "dev.wardrik.turn.started", 50)).toBe(true);
    // Already following everything: nothing new.
    expect(i.set("n3", parseInterest("+*?*"), 60).all).toBe(false);
  });

  it("forgets a node that stopped announcing, and tells a node that never said about every agent", () => {
    const i = new OtherNodesInterest(1000);
    i.set("n2", parseInterest("+*?agt_1"), 0);
    expect(i.wants("agt_1", "dev.wardrik.turn.started", 1000)).toBe(true);
    expect(i.wants("agt_1", "dev.wardrik.turn.started", 1001)).toBe(false);
    i.heardFrom("n4", 2000);
    expect(i.wants("agt_7", "dev.wardrik.turn.started", 2500)).toBe(true);
    i.set("n4", parseInterest("+*?"), 2600);
    expect(i.wants("agt_7", "dev.wardrik.turn.started", 2700)).toBe(false);
    // A hello renews what a node said it wants.
    i.heardFrom("n4", 3500);
    i.set("n5", parseInterest("+*?agt_8"), 3000);
    i.heardFrom("n5", 3900);
    expect(i.wants("agt_8", "dev.wardrik.turn.started", 4800)).toBe(true);
  });

  it("the bus knows which agents and types its poke listeners follow and says when a listener comes or goes", () => {
    const bus = new EventBus();
    let changes = 0;
    bus.onInterestChange(() => changes++);
    const offA = bus.onPoke("agt_a", () => undefined, ["turn.completed"]);
    const offA2 = bus.onPoke("agt_a", () => undefined, ["call.*", "turn.completed"]);
    expect(bus.interest()).toEqual({ all: false, agents: new Set(["agt_a"]), types: ["call.*", "turn.completed"] });
    expect(changes).toBe(2);
    // One listener that shows every type: every type.
    const offAll = bus.onPoke("*", () => undefined);
    expect(bus.interest()).toEqual({ all: true, agents: new Set(["agt_a"]) });
    offAll();
    expect(bus.interest().types).toEqual(["call.*", "turn.completed"]);
    offA();
    offA();
    expect(changes).toBe(5);
    offA2();
    expect(bus.interest()).toEqual({ all: false, agents: new Set() });
    expect(changes).toBe(6);
    const woken: string[] = [];
    bus.onPoke("agt_b", (id) => woken.push(id));
    bus.onPoke("*", (id) => woken.push(id));
    bus.pokeAll();
    expect(woken.sort()).toEqual(["*", "agt_b"]);
  });
});
