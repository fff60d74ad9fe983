/**
 * The sender against a real receiver on 127.0.0.1 and a real database: each
 * agent's events arrive in order, a dead letter stays listed, delivered ones
 * are deleted once past the retention; stopping records what was sent and
 * gives back the rest, so the next sender goes on at once, in order.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { SubscriberEntry } from "../../src/config/types.js";
import { EventBus } from "../../src/events/event-bus.js";
import { systemClock, ulidIds } from "../../src/ids.js";
import type { Db } from "../../src/store/db.js";
import { DeliveriesTable } from "../../src/store/deliveries.js";
import { DeliveryClaims } from "../../src/store/delivery-claims.js";
import { Store } from "../../src/store/store.js";
import { DeliverySender, type DeliverySenderOptions } from "../../src/webhooks/delivery-sender.js";
import { compileSubscribers } from "../../src/webhooks/subscribers.js";
import { WebhookOutbox } from "../../src/webhooks/webhook-outbox.js";
import { openTestDb } from "../helpers/test-database.js";
import { waitFor } from "../helpers/wait.js";
import { startReceiver, type Receiver } from "../helpers/webhook-receiver.js";

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of opened.splice(0).reverse()) await c.close();
});

async function setup(receiver: Receiver, entry: Partial<SubscriberEntry> = {}) {
  const { db } = await openTestDb();
  opened.push(db);
  const ids = ulidIds();
  const table = new DeliveriesTable(db);
  const subscribers = compileSubscribers([{ url: receiver.url, retry_for: 3600, timeout: 5, ...entry } as SubscriberEntry]);
  const outbox = new WebhookOutbox("default", subscribers, table, ids, systemClock);
  const store = new Store(db, new EventBus(), ids, systemClock, { onEventsWritten: outbox.onEventsWritten });
  const agentIds = new Map<string, string>();
  /** `n` events of agent `name`, each in its own transaction; returns their IDs. */
  const write = async (name: string, n: number): Promise<string[]> => {
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      const made = !agentIds.has(name);
      const id = agentIds.get(name) ?? ids.next("agent");
      agentIds.set(name, id);
      const e = await store.tx(async (w) => {
        if (made)
          await store.agents.insert(w, {
            id,
            org: "default",
            name,
            source: "api",
            definition: null,
            file: null,
            status: "idle",
            reason: null,
          });
        return w.emit({ id, org: "default" }, made ? "agent.loaded" : "agent.updated", {
          name,
          file: `agents/${name}.md`,
          definition: { n: i },
        } as never);
      });
      out.push(e.id);
    }
    return out;
  };
  const sender = (o: Partial<DeliverySenderOptions> = {}) => {
    const s = new DeliverySender({
      table,
      claims: new DeliveryClaims(db),
      subscribers,
      clock: systemClock,
      log: () => undefined,
      userAgent: "wardrik-test",
      pollMs: 50,
      ...o,
    });
    opened.push(s);
    return s;
  };
  return { db: db as Db, table, write, sender, agentIds };
}

const idsAt = (r: Receiver) => r.accepted().map((x) => x.json.id);

describe("DeliverySender", () => {
  it("sends each agent's events in order; deletes delivered ones past the retention, never a dead letter", async () => {
    let refusing = "";
    // Every event of one agent is refused; with no retry window its delivery is dead-lettered at once.
    const receiver = await startReceiver({ respond: (req) => (req.json.source.endsWith(refusing) ? { status: 500 } : { status: 200 }) });
    const { table, write, sender, agentIds } = await setup(receiver, { retry_for: 0 });
    const a = await write("a", 5);
    const [b] = await write("b", 1);
    refusing = agentIds.get("b")!;
    sender({ keepDeliveredMs: 0, pruneEveryMs: 50 }).start();
    await waitFor(() => receiver.requests.length >= 6 || undefined, "every delivery tried");
    expect(idsAt(receiver)).toEqual(a);
    // Delivered ones go at the next look; the dead letter stays, for `wardrik deliveries --failed`.
    const left = await waitFor(async () => {
      const rows = await table.list("default", { limit: 100 });
      return rows.length === 1 ? rows : undefined;
    }, "the delivered deliveries to be deleted");
    expect(left.map((r) => [r.event_id, r.status])).toEqual([[b, "failed"]]);
    expect((await table.list("default", { status: "failed", limit: 10 })).map((r) => r.event_id)).toEqual([b]);
    expect([...(await table.attemptsOf([left[0]!.id])).values()].flat().map((x) => x.http_status)).toEqual([500]);
  });

  it("keeps delivered ones within the retention", async () => {
    const receiver = await startReceiver();
    const { table, write, sender } = await setup(receiver);
    await write("a", 3);
    sender({ pruneEveryMs: 50 }).start();
    await waitFor(async () => (await table.list("default", { status: "delivered", limit: 10 })).length === 3 || undefined, "all delivered");
    await new Promise((r) => setTimeout(r, 200));
    expect(await table.list("default", { status: "delivered", limit: 10 })).toHaveLength(3);
  });

  it("stopping records what was sent and gives back the rest of its run; the next sender goes on at once, in order", async () => {
    const receiver = await startReceiver({ respond: (_req, i) => (i === 1 ? "hang" : { status: 200 }) });
    const { table, write, sender } = await setup(receiver, { timeout: 60 });
    const sent = await write("a", 3);
    const first = sender();
    first.start();
    await waitFor(() => receiver.requests.length >= 2 || undefined, "the second request, which hangs");
    await first.close();
    const rows = (await table.list("default", { limit: 10 })).reverse();
    expect(rows.map((r) => [r.status, r.attempts, r.claim])).toEqual([
      ["delivered", 1, null],
      ["pending", 0, null],
      ["pending", 0, null],
    ]);
    // Nothing waits for a claim to lapse (the attempt's 60 s timeout): a new sender takes the queue straight away.
    const started = Date.now();
    sender().start();
    await waitFor(() => receiver.accepted().length >= 3 || undefined, "the rest after the restart");
    expect(Date.now() - started).toBeLessThan(5000);
    expect(idsAt(receiver)).toEqual(sent);
  });
});
