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
import { openDb } from "../../src/store/open-db.js";
import { openTestDb } from "../helpers/test-database.js";
import { waitFor } from "../helpers/wait.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

function event(agent: string, type = "turn.started"): StoredEvent {
  return {
    agent,
    org: "default",
    type: `dev.wardrik.${type}`,
    id: `ev_${agent}`,
    source: "/",
    specversion: "1.0",
    time: new Date().toISOString(),
    data: {},
  } as unknown as StoredEvent;
}

/** A relay on a bus of its own; `followsAll`: an org-wide follower listens for pokes about every agent from the start. */
async function relay(db: PostgresDb, node: string, followsAll = true): Promise<{ bus: EventBus; poked: string[] }> {
  const bus = new EventBus();
  const poked: string[] = [];
  if (followsAll) bus.onPoke("*", (id) => poked.push(id));
  const r = new EventRelay(db, bus, node, () => undefined);
  await r.start();
  closers.push(() => r.close());
  return { bus, poked };
}

/** A fresh database, and every payload on the relay's channel as it comes. */
async function listeningDb(): Promise<{ db: PostgresDb; heard: string[]; database: { url: string } }> {
  const { db: opened, database } = await openTestDb();
  const db = opened as PostgresDb;
  closers.push(() => db.close());
  const heard: string[] = [];
  const unlisten = await db.listen("wardrik_events", (p) => heard.push(p));
  closers.push(() => unlisten());
  return { db, heard, database };
}

describe("the event relay", () => {
  it("stays quiet while its node is alone, and relays both ways once another node starts", async () => {
    const { db, heard } = await listeningDb();

    const a = await relay(db, "n1");
    await waitFor(() => heard.includes("n1|!started"), "n1's hello");
    a.bus.publish(event("ag_alone"));

    const helloes = heard.filter((p) => p === "n1|+*?*").length;
    const b = await relay(db, "n2");
    // n2's hello reaches n1, whose answer (what n1's followers want: everything) reaches n2: from then on each tells the other.
    await waitFor(() => heard.filter((p) => p === "n1|+*?*").length > helloes, "n1's answer to n2's hello");
    // A notice of the event n1 had alone would have gone out a few ms after it, long before n1 heard of n2.
    expect(heard.filter((p) => p.includes("ag_alone"))).toEqual([]);
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
    const notices = (agent: string) =>
      heard.filter((p) => p.startsWith("n1|") && !p.startsWith("n1|+*?") && p.split("|")[1]!.split(",").includes(agent));
    const told = (agent: string) => notices(agent).length > 0;

    const a = await relay(db, "n1", false);
    const b = await relay(db, "n2", false);
    await waitFor(() => heard.includes("n1|+*?") && heard.includes("n2|+*?"), "both nodes to say they follow nothing");
    a.bus.publish(event("ag_x"));

    // n2 starts following ag_x: it says so, and n1 answers with a catch-up notice naming it.
    const onB: string[] = [];
    b.bus.onPoke("ag_x", (id) => onB.push(id));
    await waitFor(() => heard.includes("n2|+*?ag_x"), "n2 to announce ag_x");
    await waitFor(() => onB.includes("ag_x"), "the catch-up notice for ag_x");
    await waitFor(() => told("ag_x"), "the catch-up notice on the channel");
    // A notice of the event published while nobody followed ag_x would have come a few ms after it, before n2 followed.
    expect(notices("ag_x"), "nobody followed ag_x: only the catch-up names it").toHaveLength(1);
    onB.length = 0;
    const before = notices("ag_x").length;
    // In one batch: a notice naming ag_x would name ag_y too if n1 told n2 of it.
    a.bus.publish(event("ag_x"));
    a.bus.publish(event("ag_y"));
    await waitFor(() => onB.includes("ag_x"), "n2 to hear of ag_x's new events");
    await waitFor(() => notices("ag_x").length > before, "the notice of ag_x's new events on the channel");
    expect(told("ag_y"), "ag_y is followed nowhere else: not told").toBe(false);

    // An org-wide follower on n2: n1 tells it about every agent, after a catch-up that wakes every follower.
    const all: string[] = [];
    b.bus.onPoke("*", (id) => all.push(id));
    await waitFor(() => heard.includes("n2|+*?*"), "n2 to announce it follows every agent");
    await waitFor(() => heard.includes("n1|*"), "n1's catch-up for every agent");
    a.bus.publish(event("ag_z"));
    await waitFor(() => all.includes("ag_z"), "n2's org-wide follower to hear of ag_z");
    expect(a.poked).toEqual([]);
  });

  it("makes up for what a node missed while its LISTEN connection was down", async () => {
    const { db, heard, database } = await listeningDb();
    // Each node on a connection of its own, named so that the test can cut one.
    const own = async (node: string) => {
      const d = (await openDb(database.url, { applicationName: node, log: () => undefined })) as PostgresDb;
      closers.push(() => d.close());
      return d;
    };
    const a = await relay(await own("n1"), "n1", false);
    const b = await relay(await own("n2"), "n2", false);
    const onB: string[] = [];
    b.bus.onPoke("ag_x", (id) => onB.push(id));
    await waitFor(() => heard.includes("n2|+*?ag_x"), "n2 to announce ag_x");
    await waitFor(() => onB.includes("ag_x"), "n1's catch-up notice for ag_x");

    // n2's LISTEN connection goes; n1 writes meanwhile, and its notice reaches nobody on n2.
    const cut = (node: string) =>
      db.run("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ? AND query LIKE 'LISTEN%'", [
        `${node} listen`,
      ]);
    await cut("n2");
    onB.length = 0;
    a.bus.publish(event("ag_x"));
    // Back, n2's followers read again whatever they follow, as if told.
    await waitFor(() => onB.includes("ag_x"), "n2's followers to read again after the reconnect", 5000);

    // n1's connection goes; n2 starts following ag_y meanwhile, an announcement n1 never hears.
    await cut("n1");
    b.bus.onPoke("ag_y", (id) => onB.push(id));
    await waitFor(() => heard.includes("n2|+*?ag_x,ag_y"), "n2 to announce ag_y");
    // Back, n1 asks the others what they follow (a hello as if it started), hears of ag_y, and tells n2 about it.
    await waitFor(
      () => heard.includes("n1|!started") && heard.lastIndexOf("n1|!started") > heard.indexOf("n2|+*?ag_x,ag_y"),
      "n1's hello after the reconnect",
      5000,
    );
    onB.length = 0;
    a.bus.publish(event("ag_y"));
    // Well before n2's next hello (20 s), which would otherwise be the first n1 hears of ag_y.
    await waitFor(() => onB.includes("ag_y"), "n2 to hear of ag_y's events", 5000);
  });

  it("tells a node only about events of the types its followers show, and everything to a node that never named types", async () => {
    const { db, heard } = await listeningDb();
    const a = await relay(db, "n1", false);
    const b = await relay(db, "n2", false);
    // An org-wide follower on n2 that shows turn ends only (the feed's `type=` filter).
    const onB: string[] = [];
    b.bus.onPoke("*", (id) => onB.push(id), ["turn.completed", "turn.failed"]);
    await waitFor(() => heard.includes("n2|+turn.completed,turn.failed?*"), "n2 to announce its types");
    await waitFor(() => heard.includes("n1|*"), "n1's catch-up");
    onB.length = 0;
    // In one batch (a notice names agents, not events): ag_0's types would be named beside ag_1 if n1 told n2 of them.
    a.bus.publish(event("ag_0", "call.started"));
    a.bus.publish(event("ag_0", "round.saved"));
    a.bus.publish(event("ag_1", "turn.completed"));
    await waitFor(() => onB.includes("ag_1"), "n2 to hear of ag_1's turn end");
    expect(onB, "no follower on n2 shows ag_0's types: not told").toEqual(["ag_1"]);

    // A per-agent stream without a type filter on n2: every type of that agent, after a catch-up naming it.
    onB.length = 0;
    b.bus.onPoke("ag_2", (id) => onB.push(id));
    await waitFor(() => heard.includes("n2|+*?*"), "n2 to announce every type");
    await waitFor(() => onB.includes("*"), "n1's catch-up for the wider types");
    onB.length = 0;
    a.bus.publish(event("ag_3", "call.started"));
    await waitFor(() => onB.includes("ag_3"), "n2 to hear of every type now");

    // A node of the release before types announces `?AGENTS`: every type of those agents.
    const old: string[] = [];
    a.bus.onPoke("*", (id) => old.push(id));
    await db.run("SELECT pg_notify(?, ?)", ["wardrik_events", "n0|?ag_old"]);
    await waitFor(() => heard.includes("n1|ag_old"), "n1's catch-up for the old node's agent");
    a.bus.publish(event("ag_old", "model.called"));
    await waitFor(() => heard.filter((p) => p === "n1|ag_old").length >= 2, "n1 to tell the old node about ag_old");
  });
});
