/**
 * PostgreSQL only. The org-wide feed passes an event once every older
 * transaction of its database has ended (positions are handed out before
 * commit). A transaction of another database on the same server holds
 * nothing back: transaction IDs are the server's, but such a transaction
 * cannot write this database's events, and another application's long
 * transaction must not stall the feed. When a transaction of the same
 * database holds an event back and writes no event itself, its end wakes no
 * follower: the follower must look again by itself, soon, not at its next
 * one-second poll.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createProject, readSse, type TestProject, type WireEvent } from "../helpers/spawn-daemon.js";

let p: TestProject;
let agent: string;
const blockers: pg.Client[] = [];

beforeAll(async () => {
  p = await createProject({
    scripts: { quiet: "steps:\n  - text: quiet reply\n" },
    files: { "agents/quiet.md": "---\ndescription: Answers without tools.\nmodel: quiet\n---\nBe quiet.\n" },
  });
  agent = await p.agentId("quiet");
}, 120_000);

afterAll(async () => {
  for (const b of blockers) await b.end().catch(() => undefined);
});

/** The project's own database, from its config.yaml. */
function projectDatabase(): string {
  return /^database:\s*(\S+)/m.exec(p.read("config.yaml"))![1]!;
}

/** A transaction on that database (by default the server's `postgres` database) that has taken a transaction ID and stays open. */
async function openBlocker(database: string = inject("postgresUrl")): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: database });
  blockers.push(client);
  await client.connect();
  await client.query("BEGIN");
  await client.query("SELECT pg_current_xact_id()");
  return client;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("org-wide feed on PostgreSQL", () => {
  it("a transaction on another database of the server holds nothing back", async () => {
    const blocker = await openBlocker();
    const res = await fetch(`${p.url}/v1/events/stream?live=only&type=turn.completed&agent=${agent}`, {
      headers: { authorization: `Bearer ${p.token}` },
    });
    let got: WireEvent | undefined;
    const reading = readSse(res, (f) => {
      if (f.event !== "event") return false;
      got = JSON.parse(f.data) as WireEvent;
      return true;
    });
    try {
      const sent = await p.send(agent, "beside another database's transaction");
      // Both a page and the live stream pass it while the other database's transaction stays open.
      const page = await p.apiOk<{ events: WireEvent[] }>("GET", `/v1/events?type=turn.completed&agent=${agent}&limit=1000`);
      expect(page.events.map((e) => e.run)).toContain(sent.run);
      await reading;
      expect(got!.run).toBe(sent.run);
    } finally {
      await blocker.query("COMMIT");
    }
  });

  it("an event held back by a transaction of the same database reaches a follower soon after that transaction ends", async () => {
    for (let round = 0; round < 3; round++) {
      const res = await fetch(`${p.url}/v1/events/stream?live=only&type=turn.completed&agent=${agent}`, {
        headers: { authorization: `Bearer ${p.token}` },
      });
      let arrived = 0;
      let got: WireEvent | undefined;
      const reading = readSse(res, (f) => {
        if (f.event !== "event") return false;
        got = JSON.parse(f.data) as WireEvent;
        arrived = Date.now();
        return true;
      });
      await sleep(150);
      const blocker = await openBlocker(projectDatabase());
      // The turn runs and commits; its events are there for the agent's own log, which is read by sequence.
      const sent = await p.send(agent, `held ${round}`);
      await sleep(100);
      expect(got, "the blocker holds the event back from the feed").toBeUndefined();
      const released = Date.now();
      await blocker.query("COMMIT");
      await reading;
      expect(got!.run).toBe(sent.run);
      // That it looks again soon (after about as long as the event was held), not at its 1 s poll, is shown
      // by http/feed-follower.test.ts with a 10 s poll and no wall clock; a bound here failed under load.
      expect(arrived, `round ${round}`).toBeGreaterThanOrEqual(released);
    }
  });
});
