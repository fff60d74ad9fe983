/**
 * The webhook outbox in the database (SQLite and PostgreSQL): rows commit
 * with their events; only the head of an (agent, subscriber) queue can be
 * claimed, and the next one is claimed with the head's outcome; a claim holds
 * until it expires, then another node takes the delivery and the first
 * node's outcome is refused; concurrent claimers never share a delivery.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { SubscriberEntry } from "../../src/config/types.js";
import { EventBus } from "../../src/events/event-bus.js";
import { systemClock, ulidIds } from "../../src/ids.js";
import type { Db } from "../../src/store/db.js";
import { DeliveriesTable, type AttemptOutcome, type ClaimedDelivery } from "../../src/store/deliveries.js";
import { Store } from "../../src/store/store.js";
import { compileSubscribers } from "../../src/webhooks/subscribers.js";
import { WebhookOutbox } from "../../src/webhooks/webhook-outbox.js";
import { openTestDb } from "../helpers/test-database.js";

const URL = "http://127.0.0.1:9/hook";
const opened: Db[] = [];
afterEach(async () => {
  for (const db of opened.splice(0)) await db.close();
});

async function setup() {
  const { db } = await openTestDb();
  opened.push(db);
  const ids = ulidIds();
  const table = new DeliveriesTable(db);
  const subscribers = compileSubscribers([{ url: URL, retry_for: 3600, timeout: 1 } as SubscriberEntry]);
  const outbox = new WebhookOutbox("default", subscribers, table, ids, systemClock);
  const store = new Store(db, new EventBus(), ids, systemClock, { onEventsWritten: outbox.onEventsWritten });
  const agents = new Map<string, string>();
  /** Writes `n` events of agent `name` (made on first use), each in its own transaction; returns their seqs. */
  const write = async (name: string, n = 1): Promise<number[]> => {
    let id = agents.get(name);
    const seqs: number[] = [];
    for (let i = 0; i < n; i++) {
      const made = id === undefined;
      const agentId = id ?? ids.next("agent");
      const e = await store.tx(async (w) => {
        if (made) {
          const def = null;
          await store.agents.insert(w, {
            id: agentId,
            org: "default",
            name,
            source: "api",
            definition: def,
            file: null,
            status: "idle",
            reason: null,
          });
        }
        return w.emit({ id: agentId, org: "default" }, made ? "agent.loaded" : "agent.updated", {
          name,
          file: `agents/${name}.md`,
          definition: { n: i },
        } as never);
      });
      agents.set(name, (id = agentId));
      seqs.push(e.seq);
    }
    return seqs;
  };
  return { db, table, write, outbox };
}

const delivered = (): AttemptOutcome => ({
  startedAt: new Date().toISOString(),
  durationMs: 1,
  httpStatus: 200,
  error: null,
  next: { status: "delivered" },
});
const failedUntil = (nextAt: number): AttemptOutcome => ({
  startedAt: new Date().toISOString(),
  durationMs: 1,
  httpStatus: 500,
  error: "HTTP 500",
  next: { status: "pending", nextAt },
});
const seqOf = (c: ClaimedDelivery[]) => c.map((x) => x.event.seq);

describe("the webhook outbox", () => {
  it("commits a delivery with each event; only a queue's head is claimed, and the next with the head's outcome", async () => {
    const { table, write } = await setup();
    const seqs = await write("a", 3);
    const now = Date.now();
    const first = await table.claim("n1", now, now + 60_000, 10);
    expect(seqOf(first)).toEqual([seqs[0]]);
    expect(first[0]!.event.type).toBe("dev.wardrik.agent.loaded");
    // The rest of the queue waits behind its head, for this node and any other.
    expect(await table.claim("n2", now, now + 60_000, 10)).toEqual([]);
    const r = await table.finish(first[0]!.row, "n1", delivered(), now, now + 60_000);
    expect(r.lost).toBe(false);
    expect(r.next?.event.seq).toBe(seqs[1]);
    // A failed attempt keeps its place at the head until it is due again: nothing behind it goes first.
    const r2 = await table.finish(r.next!.row, "n1", failedUntil(now + 30_000), now, now + 60_000);
    expect(r2).toEqual({ lost: false });
    expect(await table.claim("n2", now + 1000, now + 60_000, 10)).toEqual([]);
    const again = await table.claim("n2", now + 30_000, now + 90_000, 10);
    expect(seqOf(again)).toEqual([seqs[1]]);
    expect(again[0]!.row.attempts).toBe(1);
  });

  it("a queue that ran dry gets a new head from the next event; other agents' queues are claimed beside it", async () => {
    const { table, write } = await setup();
    const [a1] = await write("a");
    const now = Date.now();
    const head = await table.claim("n1", now, now + 60_000, 10);
    expect((await table.finish(head[0]!.row, "n1", delivered(), now, now + 60_000)).next).toBeUndefined();
    const [a2] = await write("a");
    const [b1] = await write("b");
    const later = Date.now();
    const both = await table.claim("n1", later, later + 60_000, 10);
    expect(both.map((c) => c.event.seq).sort()).toEqual([a2, b1].sort());
    expect(a1).toBeLessThan(a2!);
  });

  it("a claim holds until it expires; then another node takes the delivery and the first one's outcome is refused", async () => {
    const { table, write } = await setup();
    await write("a");
    const now = Date.now();
    const [mine] = await table.claim("n1", now, now + 5_000, 10);
    expect(mine).toBeDefined();
    expect(await table.claim("n2", now + 4_999, now + 10_000, 10)).toEqual([]);
    const [theirs] = await table.claim("n2", now + 5_000, now + 10_000, 10);
    expect(theirs?.row.id).toBe(mine!.row.id);
    expect(await table.finish(mine!.row, "n1", delivered(), now + 6_000, now + 60_000)).toEqual({ lost: true });
    const ok = await table.finish(theirs!.row, "n2", delivered(), now + 6_000, now + 60_000);
    expect(ok.lost).toBe(false);
    expect((await table.get("default", mine!.row.id))?.status).toBe("delivered");
  });

  it("claimers at the same time never share a delivery", async () => {
    const { table, write } = await setup();
    for (let i = 0; i < 12; i++) await write(`agent-${i}`);
    const now = Date.now();
    const got = await Promise.all(["n1", "n2", "n3", "n4"].map((n) => table.claim(n, now, now + 60_000, 5)));
    const ids = got.flat().map((c) => c.row.id);
    expect(ids).toHaveLength(12);
    expect(new Set(ids).size).toBe(12);
  });

  it("dead-lettered and delivered ones can be sent again; the queue goes on meanwhile", async () => {
    const { table, write } = await setup();
    const seqs = await write("a", 2);
    const now = Date.now();
    const [head] = await table.claim("n1", now, now + 60_000, 10);
    const r = await table.finish(head!.row, "n1", delivered(), now, now + 60_000);
    expect(r.next?.event.seq).toBe(seqs[1]);
    // The first one is asked for again while the second is in flight: both are out at once, neither waits.
    expect(await table.retry("default", head!.row.id, now)).toBe(true);
    const [resent] = await table.claim("n2", now, now + 60_000, 10);
    expect(resent?.event.seq).toBe(seqs[0]);
    expect(await table.retry("other-org", head!.row.id, now)).toBe(false);
  });

  it("an event written while its queue's head finishes is never left without a head", async () => {
    const { table, write } = await setup();
    await write("a");
    for (let round = 0; round < 25; round++) {
      const now = Date.now();
      const [head] = await table.claim("n1", now, now + 60_000, 10);
      expect(head, `round ${round}: a head to claim`).toBeDefined();
      // The head's outcome and the next event commit at the same moment (on PostgreSQL, truly at once).
      const [r, [seq]] = await Promise.all([table.finish(head!.row, "n1", delivered(), now, now + 60_000), write("a")]);
      if (r.next) {
        expect(r.next.event.seq).toBe(seq);
        await table.release(r.next.row.id, "n1");
      }
    }
  });
});
