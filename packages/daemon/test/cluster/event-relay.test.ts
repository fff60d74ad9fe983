/**
 * The event relay on a real PostgreSQL: a daemon alone on its database sends
 * no notices about its events (each one was a NOTIFY that only it heard); once
 * another node starts, both tell each other, from the first event on.
 */
import { afterEach, describe, expect, it } from "vitest";
import { EventRelay } from "../../src/cluster/event-relay.js";
import { EventBus, type StoredEvent } from "../../src/events/event-bus.js";
import type { PostgresDb } from "../../src/store/postgres-db.js";
import { openTestDb } from "../helpers/test-database.js";
import { waitFor } from "../helpers/wait.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

function event(agent: string): StoredEvent {
  return {
    agent,
    org: "default",
    type: "dev.wardrik.turn.started",
    id: `ev_${agent}`,
    source: "/",
    specversion: "1.0",
    time: new Date().toISOString(),
    data: {},
  } as unknown as StoredEvent;
}

async function relay(db: PostgresDb, node: string) {
  const bus = new EventBus();
  const poked: string[] = [];
  bus.onPoke("*", (id) => poked.push(id));
  const r = new EventRelay(db, bus, node, () => undefined);
  await r.start();
  closers.push(() => r.close());
  return { bus, poked };
}

describe("the event relay", () => {
  it("stays quiet while its node is alone, and relays both ways once another node starts", async () => {
    const { db: opened } = await openTestDb();
    const db = opened as PostgresDb;
    closers.push(() => db.close());
    const heard: string[] = [];
    const unlisten = await db.listen("wardrik_events", (p) => heard.push(p));
    closers.push(() => unlisten());

    const a = await relay(db, "n1");
    await waitFor(() => heard.includes("n1|!started"), "n1's hello");
    a.bus.publish(event("ag_alone"));
    await new Promise((r) => setTimeout(r, 300));
    expect(heard.filter((p) => p.includes("ag_alone"))).toEqual([]);

    const b = await relay(db, "n2");
    // n2's hello reaches n1, whose answer reaches n2: from then on each tells the other.
    await waitFor(() => heard.includes("n1|"), "n1's answer to n2's hello");
    a.bus.publish(event("ag_on_n1"));
    await waitFor(() => b.poked.includes("ag_on_n1"), "n2 to hear of n1's event");
    b.bus.publish(event("ag_on_n2"));
    await waitFor(() => a.poked.includes("ag_on_n2"), "n1 to hear of n2's event");
    // A node is never poked about its own events.
    expect(a.poked).not.toContain("ag_on_n1");
    expect(b.poked).not.toContain("ag_on_n2");
  });
});
