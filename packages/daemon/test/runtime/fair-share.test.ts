/**
 * The daemon shared between orgs: per-org queues served in turn, for the event
 * loop (one piece of work starting per turn of the event loop when pieces
 * contend) and for the database (a pooled connection on PostgreSQL, a place in
 * the next group commit on SQLite).
 */
import { afterEach, describe, expect, it } from "vitest";
import { EventBus, type StoredEvent } from "../../src/events/event-bus.js";
import { systemClock, ulidIds } from "../../src/ids.js";
import { FairShare } from "../../src/runtime/fair-share.js";
import { OrgFairQueue } from "../../src/store/org-fair-queue.js";
import { readDefinition } from "../../src/runtime/agent-admin.js";
import type { AgentRow } from "../../src/store/rows.js";
import type { Db } from "../../src/store/db.js";
import { Store } from "../../src/store/store.js";
import { createHarness, type Harness } from "../helpers/runtime-harness.js";
import { openTestDb, TEST_DIALECT } from "../helpers/test-database.js";

/** Answers after a moment: the replies of many turns come in together, as a provider's replies do over the network. */
const ECHO = { steps: [{ delay_ms: 20, text: "You said: {{message}}" }] };

/** The definition an agent was created with. */
async function definitionOf(h: Harness, agent: AgentRow) {
  return readDefinition((await h.store.agents.get(agent.id))!);
}

describe("OrgFairQueue", () => {
  it("serves the orgs with items in turn, one item each, each org's items in the order they came, a newcomer ahead of backlogs", () => {
    const q = new OrgFairQueue<string>();
    for (let i = 1; i <= 5; i++) q.push("acme", `a${i}`);
    q.push("beta", "b1");
    q.push("gamma", "c1");
    q.push("beta", "b2");
    expect(q.size).toBe(8);
    expect(q.waiting("acme")).toBe(5);
    const order: string[] = [];
    // An org that comes while others are served goes ahead of their backlogs.
    order.push(q.shift()!, q.shift()!);
    q.push("delta", "d1");
    for (let item = q.shift(); item !== undefined; item = q.shift()) order.push(item);
    expect(order).toEqual(["a1", "b1", "c1", "d1", "a2", "b2", "a3", "a4", "a5"]);
    expect(q.size).toBe(0);
    expect(q.shift()).toBeUndefined();
  });
  it("puts an org coming back after a wait ahead of another org's backlog", () => {
    const q = new OrgFairQueue<string>();
    for (let i = 1; i <= 10; i++) q.push("acme", `a${i}`);
    expect([q.shift(), q.shift(), q.shift()]).toEqual(["a1", "a2", "a3"]);
    q.push("beta", "b1");
    expect(q.shift()).toBe("b1");
    expect(q.shift()).toBe("a4");
  });
});

describe("FairShare", () => {
  it("lets the first piece of a turn of the event loop go on at once, and the next wait for the next turn", async () => {
    const fair = new FairShare();
    const order: string[] = [];
    const first = fair.enter("acme").then(() => order.push("a1"));
    const second = fair.enter("acme").then(() => order.push("a2"));
    expect(fair.waiting("acme")).toBe(1);
    await first;
    expect(order).toEqual(["a1"]);
    await second;
    expect(order).toEqual(["a1", "a2"]);
    // Once nothing waits, a piece in a new turn of the event loop goes on at once again.
    await new Promise((r) => setImmediate(r));
    const third = fair.enter("acme");
    expect(fair.waiting("acme")).toBe(0);
    await third;
  });

  it("an org's one piece of work runs after one piece of another org's backlog, not after all of it", async () => {
    const fair = new FairShare();
    const order: string[] = [];
    const pieces: Promise<unknown>[] = [];
    for (let i = 0; i <= 20; i++) pieces.push(fair.enter("acme").then(() => order.push(`a${i}`)));
    expect(fair.waiting("acme")).toBe(20);
    // Another org's one piece comes last, and is the second of the backlog to start.
    pieces.push(fair.enter("beta").then(() => order.push("b")));
    await Promise.all(pieces);
    expect(order.slice(0, 4)).toEqual(["a0", "a1", "b", "a2"]);
    expect(order).toHaveLength(22);
  });

  it("settles once the pieces waiting for the next turns of the event loop have run, or after at most so many turns", async () => {
    const fair = new FairShare();
    const order: string[] = [];
    // Five pieces in one turn of the event loop: the first goes on at once, the others one a turn of the loop after it.
    const pieces = [1, 2, 3, 4, 5].map((i) => fair.enter("acme").then(() => order.push(`piece ${i}`)));
    await fair.settled(10);
    order.push("settled");
    await Promise.all(pieces);
    expect(order).toEqual(["piece 1", "piece 2", "piece 3", "piece 4", "piece 5", "settled"]);

    // Work that keeps coming (a piece each turn of the event loop, and the next waiting) does not hold it past its bound.
    let busy = true;
    const endless = (async () => {
      while (busy) await fair.enter("acme");
    })();
    await fair.settled(3);
    busy = false;
    await endless;
  });
});

describe("turns of two orgs on one runtime", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("with one org's backlog of turns runnable, another org's turn is driven beside it, not after it", async () => {
    h = await createHarness();
    const busy = await h.agent({ name: "busy", script: ECHO });
    h.script("steady", ECHO);
    const steady = await h.runtime.createAgent("beta", { ...(await definitionOf(h, busy)), model: "steady", title: "steady" });
    const backlog = 30;
    // All queued in the same turn of the event loop: the busy org's thirty first, the other org's one last.
    const sent = [
      ...Array.from({ length: backlog }, (_, i) => h!.runtime.enqueue(busy, `c${i}`, `m${i}`)),
      h.runtime.enqueue(steady, "main", "hi"),
    ];
    await Promise.all(sent);
    const ended = (e: StoredEvent) => e.type === "dev.wardrik.turn.completed";
    await h.waitFor(() => h!.events.filter(ended).length === backlog + 1);
    const order = h.events.filter(ended).map((e) => e.org);
    // First come first served, the other org's turn ended last; shared, it ends among the first few.
    expect(order.indexOf("beta"), order.join(" ")).toBeLessThan(4);
  });
});

/**
 * A transaction of org acme that holds the database (the one connection of a pool of one on PostgreSQL, the running
 * batch on SQLite) until `release` is called; resolves once it holds it.
 */
async function holdTheDatabase(db: Db): Promise<{ release(): void; done: Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let holding!: () => void;
  const held = new Promise<void>((r) => (holding = r));
  const done = db.transaction(async (tx) => {
    await tx.get("SELECT 1 AS one");
    holding();
    await released;
  }, "acme");
  await held;
  return { release, done };
}

describe("transactions of two orgs waiting for the database", () => {
  it("one org's transaction gets the database after one of another org's backlog, not after all of it", async () => {
    const { db } = await openTestDb({ poolSize: 1 });
    const store = new Store(db, new EventBus(), ulidIds(), systemClock);
    try {
      const holder = await holdTheDatabase(db);
      const order: string[] = [];
      const backlog = Array.from({ length: 20 }, (_, i) =>
        store.tx(async (w) => {
          order.push(`a${i}`);
          await w.get("SELECT 1 AS one");
        }, "acme"),
      );
      const other = store.tx(async (w) => {
        order.push("b");
        await w.get("SELECT 1 AS one");
      }, "beta");
      holder.release();
      await Promise.all([holder.done, ...backlog, other]);
      expect(order).toHaveLength(21);
      // First come first served, the other org's transaction started last; in turn, second.
      expect(order.indexOf("b"), order.join(" ")).toBe(1);
    } finally {
      await db.close();
    }
  });

  it("so do reads done for an org's work", async () => {
    const { db } = await openTestDb({ poolSize: 1 });
    try {
      const holder = await holdTheDatabase(db);
      const order: string[] = [];
      const read = (org: string, name: string) =>
        db
          .readsFor(org)
          .get("SELECT 1 AS one")
          .then(() => order.push(name));
      const reads = [...Array.from({ length: 20 }, (_, i) => read("acme", `a${i}`)), read("beta", "b")];
      holder.release();
      await Promise.all([holder.done, ...reads]);
      expect(order).toHaveLength(21);
      // On PostgreSQL each read waits for the one connection, the orgs in turn; SQLite's reads never wait, so they end
      // in the order they were asked.
      expect(order.indexOf("b"), order.join(" ")).toBe(TEST_DIALECT === "postgres" ? 1 : 20);
    } finally {
      await db.close();
    }
  });
});
