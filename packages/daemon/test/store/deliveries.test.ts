/**
 * The webhook outbox in the database (SQLite and PostgreSQL): rows commit
 * with their events; only the head of an (agent, subscriber) queue can be
 * claimed, with the deliveries behind it as one run; a run's outcomes are
 * recorded in one transaction that moves the queue's head on; a claim holds
 * until it expires, then another node takes the delivery and the first
 * node's outcome is refused; concurrent claimers never share a delivery;
 * delivered rows are deleted after the retention, dead letters never.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { SubscriberEntry } from "../../src/config/types.js";
import { EventBus } from "../../src/events/event-bus.js";
import { encodeTime, systemClock, ulidIds } from "../../src/ids.js";
import type { Db } from "../../src/store/db.js";
import { DeliveriesTable } from "../../src/store/deliveries.js";
import { DeliveryClaims, type AttemptOutcome, type ClaimedDelivery, type RunResult } from "../../src/store/delivery-claims.js";
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
  return { db, table, claims: new DeliveryClaims(db), write, outbox };
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
const seqOf = (runs: ClaimedDelivery[][]) => runs.map((run) => run.map((x) => x.event.seq));
/** A run whose deliveries were all sent with these outcomes (in order), none left unsent. */
const sent = (run: readonly ClaimedDelivery[], ...outcomes: AttemptOutcome[]): RunResult => ({
  attempts: outcomes.map((outcome, i) => ({ row: run[i]!.row, outcome })),
  unsent: run.slice(outcomes.length).map((c) => c.row),
});
const HOUR = 3_600_000;

describe("the webhook outbox", () => {
  it("commits a delivery with each event; only a queue's head is claimed, and the next with the head's outcome", async () => {
    const { claims, write } = await setup();
    const seqs = await write("a", 3);
    const now = Date.now();
    const first = await claims.claim("n1", now, now + 60_000, 10);
    expect(seqOf(first)).toEqual([[seqs[0]]]);
    expect(first[0]![0]!.event.type).toBe("dev.wardrik.agent.loaded");
    // The rest of the queue waits behind its head, for this node and any other.
    expect(await claims.claim("n2", now, now + 60_000, 10)).toEqual([]);
    const r = await claims.settle("n1", [sent(first[0]!, delivered())], now, now + 60_000, 10, 1);
    expect(r.lost).toEqual([]);
    expect(seqOf(r.runs)).toEqual([[seqs[1]]]);
    // A failed attempt keeps its place at the head until it is due again: nothing behind it goes first.
    const r2 = await claims.settle("n1", [sent(r.runs[0]!, failedUntil(now + 30_000))], now, now + 60_000, 10, 1);
    expect(r2).toEqual({ lost: [], runs: [] });
    expect(await claims.claim("n2", now + 1000, now + 60_000, 10)).toEqual([]);
    const again = await claims.claim("n2", now + 30_000, now + 90_000, 10);
    expect(seqOf(again)).toEqual([[seqs[1]]]);
    expect(again[0]![0]!.row.attempts).toBe(1);
  });

  it("claims a head with the deliveries behind it; a run stopped by a failure gives the rest back, in order", async () => {
    const { table, claims, write, db } = await setup();
    const seqs = await write("a", 5);
    const now = Date.now();
    const [run] = await claims.claim("n1", now, now + 60_000, 10, 3);
    expect(run!.map((c) => c.event.seq)).toEqual(seqs.slice(0, 3));
    // The whole run is this node's: nobody else sends any of it, nor what is behind it.
    expect(await claims.claim("n2", now, now + 60_000, 10, 3)).toEqual([]);
    // The first is taken, the second fails and waits for its retry, the third was never sent.
    const statementsBefore = db.stats.commits;
    const r = await claims.settle("n1", [sent(run!, delivered(), failedUntil(now + 30_000))], now, now + 60_000, 10, 3);
    expect(db.stats.commits - statementsBefore).toBeLessThanOrEqual(1);
    expect(r).toEqual({ lost: [], runs: [] });
    const [first, second, third] = await Promise.all(run!.map((c) => table.get("default", c.row.id)));
    expect([first?.status, second?.status, third?.status]).toEqual(["delivered", "pending", "pending"]);
    expect([second?.head, third?.head, third?.claim]).toEqual([1, 0, null]);
    const attempts = await table.attemptsOf(run!.map((c) => c.row.id));
    expect([...attempts.values()].map((a) => a.map((x) => x.http_status))).toEqual([[200], [500]]);
    // Once the failed one is due it heads a run again, with the rest of the queue behind it.
    const [resumed] = await claims.claim("n2", now + 30_000, now + 90_000, 10, 10);
    expect(resumed!.map((c) => c.event.seq)).toEqual(seqs.slice(1));
    // A run that ends with the queue: the next event makes a new head, claimed on its own.
    const done = await claims.settle("n2", [sent(resumed!, ...resumed!.map(() => delivered()))], now + 30_000, now + 90_000, 10, 10);
    expect(done.runs).toEqual([]);
    const [next] = await write("a");
    expect(seqOf(await claims.claim("n1", Date.now(), Date.now() + 60_000, 10, 10))).toEqual([[next]]);
  });

  it("a queue that ran dry gets a new head from the next event; other agents' queues are claimed beside it", async () => {
    const { claims, write } = await setup();
    const [a1] = await write("a");
    const now = Date.now();
    const head = await claims.claim("n1", now, now + 60_000, 10);
    expect((await claims.settle("n1", [sent(head[0]!, delivered())], now, now + 60_000, 10, 1)).runs).toEqual([]);
    const [a2] = await write("a");
    const [b1] = await write("b");
    const later = Date.now();
    const both = await claims.claim("n1", later, later + 60_000, 10);
    expect(both.map((run) => run[0]!.event.seq).sort()).toEqual([a2, b1].sort());
    expect(a1).toBeLessThan(a2!);
  });

  it("a claim holds until it expires; then another node takes the delivery and the first one's outcome is refused", async () => {
    const { table, claims, write } = await setup();
    await write("a", 2);
    const now = Date.now();
    const [mine] = await claims.claim("n1", now, now + 5_000, 10, 2);
    expect(mine).toHaveLength(2);
    expect(await claims.claim("n2", now + 4_999, now + 10_000, 10, 2)).toEqual([]);
    const [theirs] = await claims.claim("n2", now + 5_000, now + 10_000, 10, 2);
    expect(theirs?.map((c) => c.row.id)).toEqual(mine!.map((c) => c.row.id));
    const refused = await claims.settle("n1", [sent(mine!, delivered(), delivered())], now + 6_000, now + 60_000, 0, 1);
    expect(refused.lost.map((r) => r.id)).toEqual(mine!.map((c) => c.row.id));
    const ok = await claims.settle("n2", [sent(theirs!, delivered(), delivered())], now + 6_000, now + 60_000, 0, 1);
    expect(ok.lost).toEqual([]);
    expect((await table.get("default", mine![0]!.row.id))?.status).toBe("delivered");
    // The refused outcomes left no attempt behind: one each, the node that held the claim's.
    expect([...(await table.attemptsOf(mine!.map((c) => c.row.id))).values()].map((a) => a.length)).toEqual([1, 1]);
  });

  it("claimers at the same time never share a delivery", async () => {
    const { claims, write } = await setup();
    for (let i = 0; i < 12; i++) await write(`agent-${i}`, 2);
    const now = Date.now();
    const got = await Promise.all(["n1", "n2", "n3", "n4"].map((n) => claims.claim(n, now, now + 60_000, 5, 4)));
    const ids = got.flat(2).map((c) => c.row.id);
    expect(ids).toHaveLength(24);
    expect(new Set(ids).size).toBe(24);
  });

  it("dead-lettered and delivered ones can be sent again; the queue goes on meanwhile", async () => {
    const { table, claims, write } = await setup();
    const seqs = await write("a", 2);
    const now = Date.now();
    const [head] = await claims.claim("n1", now, now + 60_000, 10);
    const r = await claims.settle("n1", [sent(head!, delivered())], now, now + 60_000, 10, 10);
    expect(seqOf(r.runs)).toEqual([[seqs[1]]]);
    // The first one is asked for again while the second is in flight: both are out at once, neither waits.
    expect(await table.retry("default", head![0]!.row.id, now)).toBe(true);
    const resent = await claims.claim("n2", now, now + 60_000, 10, 10);
    expect(seqOf(resent)).toEqual([[seqs[0]]]);
    expect(await table.retry("other-org", head![0]!.row.id, now)).toBe(false);
  });

  it("an event written while its queue's head finishes is never left without a head", async () => {
    const { claims, write } = await setup();
    await write("a");
    for (let round = 0; round < 25; round++) {
      const now = Date.now();
      const [run] = await claims.claim("n1", now, now + 60_000, 10, 5);
      expect(run, `round ${round}: a head to claim`).toBeDefined();
      // The run's outcome and the next event commit at the same moment (on PostgreSQL, truly at once).
      const [r, [seq]] = await Promise.all([
        claims.settle("n1", [sent(run!, ...run!.map(() => delivered()))], now, now + 60_000, 10, 5),
        write("a"),
      ]);
      if (r.runs.length > 0) {
        expect(seqOf(r.runs)).toEqual([[seq]]);
        await claims.settle("n1", [sent(r.runs[0]!)], now, now + 60_000, 0, 1);
      }
    }
  });

  it("deletes delivered deliveries after the retention, in batches, with their attempts; never pending ones or dead letters", async () => {
    const { table, claims, write } = await setup();
    await write("a", 3);
    await write("b", 1);
    const now = Date.now();
    const [runA, runB] = (await claims.claim("n1", now, now + 60_000, 10, 10)).sort((x, y) => x.length - y.length).reverse();
    const deadLetter: AttemptOutcome = { ...failedUntil(0), next: { status: "failed", endedAt: new Date(now).toISOString() } };
    // a: two delivered, then one dead-lettered; b: its one delivery is still being retried.
    await claims.settle(
      "n1",
      [sent(runA!, delivered(), delivered(), deadLetter), sent(runB!, failedUntil(now + HOUR))],
      now,
      now + 60_000,
      0,
      1,
    );
    const later = await write("a", 1);
    const ids = [...runA!, ...runB!].map((c) => c.row.id);
    const listed = async () => (await table.list("default", { limit: 100 })).map((r) => [r.event_seq, r.status]);
    const before = await listed();
    expect(before.filter(([, s]) => s === "delivered")).toHaveLength(2);
    // Nothing is old enough yet.
    const idNow = `dlv_${encodeTime(now - HOUR)}`;
    expect(await table.prune(idNow, new Date(now - HOUR).toISOString(), 10)).toBe(0);
    // A day on, with a retention of an hour: the two delivered go, one per batch here, with their attempts.
    const dayOn = now + 24 * HOUR;
    const cut = `dlv_${encodeTime(dayOn - HOUR)}`;
    expect(await table.prune(cut, new Date(dayOn - HOUR).toISOString(), 1)).toBe(1);
    expect(await table.prune(cut, new Date(dayOn - HOUR).toISOString(), 1)).toBe(1);
    expect(await table.prune(cut, new Date(dayOn - HOUR).toISOString(), 1)).toBe(0);
    expect((await listed()).map(([, s]) => s).sort()).toEqual(["failed", "pending", "pending"]);
    expect((await table.list("default", { status: "failed", limit: 10 })).map((r) => r.id)).toEqual([runA![2]!.row.id]);
    const attempts = await table.attemptsOf(ids);
    expect([...attempts.keys()].sort()).toEqual([runA![2]!.row.id, runB![0]!.row.id].sort());
    expect(later).toHaveLength(1);
  });
});
