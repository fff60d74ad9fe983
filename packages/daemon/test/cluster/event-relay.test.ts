/**
 * The event relay on a real PostgreSQL: a daemon alone on its database sends
 * no notices about its events (each one was a NOTIFY that only it heard); once
 * another node starts, both tell each other, from the first event on, about
 * the agents the other's followers want, and only those.
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

/** A relay on a bus of its own; `followsAll`: an org-wide follower listens for pokes about every agent from the start. */
async function relay(db: PostgresDb, node: string, followsAll = true) {
  const bus = new EventBus();
  const poked: string[] = [];
  if (followsAll) bus.onPoke("*", (id) => poked.push(id));
  const r = new EventRelay(db, bus, node, () => undefined);
  await r.start();
  closers.push(() => r.close());
  return { bus, poked };
}

/** A fresh database, and every payload on the relay's channel as it comes. */
async function listeningDb(): Promise<{ db: PostgresDb; heard: string[] }> {
  const { db: opened } = await openTestDb();
  const db = opened as PostgresDb;
  closers.push(() => db.close());
  const heard: string[] = [];
  const unlisten = await db.listen("wardrik_events", (p) => heard.push(p));
  closers.push(() => unlisten());
  return { db, heard };
}

describe("the event relay", () => {
  it("stays quiet while its node is alone, and relays both ways once another node starts", async () => {
    const { db, heard } = await listeningDb();

    const a = await relay(db, "n1");
    await waitFor(() => heard.includes("n1|!started"), "n1's hello");
    a.bus.publish(event("ag_alone"));
    await new Promise((r) => setTimeout(r, 300));
    expect(heard.filter((p) => p.includes("ag_alone"))).toEqual([]);

    const helloes = heard.filter((p) => p === "n1|?*").length;
    const b = await relay(db, "n2");
    // n2's hello reaches n1, whose answer (what n1's followers want: everything) reaches n2: from then on each tells the other.
    await waitFor(() => heard.filter((p) => p === "n1|?*").length > helloes, "n1's answer to n2's hello");
    a.bus.publish(event("ag_on_n1"));
    await waitFor(() => b.poked.includes("ag_on_n1"), "n2 to hear of n1's event");
    b.bus.publish(event("ag_on_n2"));
    await waitFor(() => a.poked.includes("ag_on_n2"), "n1 to hear of n2's event");
    // A node is never poked about its own events.
    expect(a.poked).not.toContain("ag_on_n1");
    expect(b.poked).not.toContain("ag_on_n2");
  });

  it("tells a node only about the agents its followers want, with a catch-up when it starts following one", async () => {
    const { db, heard } = await listeningDb();
    const told = (agent: string) =>
      heard.some((p) => p.startsWith("n1|") && !p.startsWith("n1|?") && p.split("|")[1]!.split(",").includes(agent));

    const a = await relay(db, "n1", false);
    const b = await relay(db, "n2", false);
    await waitFor(() => heard.includes("n1|?") && heard.includes("n2|?"), "both nodes to say they follow nothing");
    a.bus.publish(event("ag_x"));
    await new Promise((r) => setTimeout(r, 300));
    expect(told("ag_x"), "nobody follows ag_x: not told").toBe(false);

    // n2 starts following ag_x: it says so, and n1 answers with a catch-up notice naming it.
    const onB: string[] = [];
    b.bus.onPoke("ag_x", (id) => onB.push(id));
    await waitFor(() => heard.includes("n2|?ag_x"), "n2 to announce ag_x");
    await waitFor(() => onB.includes("ag_x"), "the catch-up notice for ag_x");
    onB.length = 0;
    a.bus.publish(event("ag_x"));
    a.bus.publish(event("ag_y"));
    await waitFor(() => onB.includes("ag_x"), "n2 to hear of ag_x's new events");
    await new Promise((r) => setTimeout(r, 300));
    expect(told("ag_y"), "ag_y is followed nowhere else: not told").toBe(false);

    // An org-wide follower on n2: n1 tells it about every agent, after a catch-up that wakes every follower.
    const all: string[] = [];
    b.bus.onPoke("*", (id) => all.push(id));
    await waitFor(() => heard.includes("n2|?*"), "n2 to announce it follows every agent");
    await waitFor(() => heard.includes("n1|*"), "n1's catch-up for every agent");
    a.bus.publish(event("ag_z"));
    await waitFor(() => all.includes("ag_z"), "n2's org-wide follower to hear of ag_z");
    expect(a.poked).toEqual([]);
  });
});
