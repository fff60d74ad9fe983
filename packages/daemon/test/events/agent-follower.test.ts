/**
 * The follower behind an MCP client's ask: an agent's events in order and
 * each once, whether they come on this process's bus, by another node's
 * word (a poke), or only in the store (the word was lost, and the follower
 * looks on its own). The store here is a list in memory the test appends to,
 * as another node's commits would.
 */
import { describe, expect, it } from "vitest";
import { AgentFollower } from "../../src/agent-mcp/follow-agent.js";
import { EventBus, type StoredEvent } from "../../src/events/event-bus.js";
import type { Store } from "../../src/store/store.js";

const AGENT = "agt_followed";

function event(seq: number): StoredEvent {
  return { agent: AGENT, org: "default", seq, id: `ev_${seq}`, type: "dev.wardrik.call.started", data: {} } as unknown as StoredEvent;
}

/** A store whose record is `rows`, counting its reads. */
function storeOf(rows: StoredEvent[]): { store: Store; reads: () => number } {
  let reads = 0;
  const store = {
    events: {
      list: (_agent: string, after: number, limit: number) => {
        reads++;
        return Promise.resolve(rows.filter((e) => e.seq > after).slice(0, limit));
      },
    },
  } as unknown as Store;
  return { store, reads: () => reads };
}

const never = new AbortController().signal;

describe("an agent follower", () => {
  it("reads the store when another node says it wrote events, without waiting out its wait", async () => {
    const rows: StoredEvent[] = [];
    const { store } = storeOf(rows);
    const bus = new EventBus();
    const f = new AgentFollower(store, bus, AGENT, 0);
    expect(await f.next(10, never)).toEqual([]);
    const t0 = Date.now();
    const next = f.next(10_000, never);
    rows.push(event(1), event(2));
    setTimeout(() => bus.poke(AGENT), 20);
    expect((await next).map((e) => e.seq)).toEqual([1, 2]);
    expect(Date.now() - t0).toBeLessThan(5000);
    f.close();
  });

  it("looks on its own every lookMs when no word comes", async () => {
    const rows: StoredEvent[] = [];
    const { store, reads } = storeOf(rows);
    const f = new AgentFollower(store, new EventBus(), AGENT, 0, 50);
    expect(await f.next(10, never)).toEqual([]);
    const before = reads();
    const next = f.next(10_000, never);
    setTimeout(() => rows.push(event(1)), 120);
    expect((await next).map((e) => e.seq)).toEqual([1]);
    // Some reads that found nothing, then the one that found it: the wait did not run out.
    expect(reads() - before).toBeGreaterThanOrEqual(2);
    f.close();
  });

  it("reads the store first when a bus event skips numbers: another node wrote those between", async () => {
    const rows: StoredEvent[] = [];
    const { store } = storeOf(rows);
    const bus = new EventBus();
    const f = new AgentFollower(store, bus, AGENT, 0);
    expect(await f.next(10, never)).toEqual([]);
    // Another node committed 1 (its word is still on the way); this node then committed 2 and published it.
    rows.push(event(1), event(2));
    bus.publish(event(2));
    expect((await f.next(1000, never)).map((e) => e.seq)).toEqual([1, 2]);
    // What follows on from the last taken comes straight from the bus.
    bus.publish(event(3));
    expect((await f.next(1000, never)).map((e) => e.seq)).toEqual([3]);
    f.close();
  });

  it("takes a long backlog a page at a time, each event once, even with bus events waiting", async () => {
    const rows = Array.from({ length: 1500 }, (_, i) => event(i + 1));
    const { store } = storeOf(rows);
    const bus = new EventBus();
    const f = new AgentFollower(store, bus, AGENT, 0);
    bus.publish(event(1500));
    const got: number[] = [];
    while (got.length < 1500) {
      const page = await f.next(100, never);
      if (page.length === 0) break;
      got.push(...page.map((e) => e.seq));
    }
    expect(got).toEqual(rows.map((e) => e.seq));
    f.close();
  });
});
