/**
 * The org-wide feed's follow loop, against a feed in memory and real timers:
 * when it reads again, and when it waits. The polls are long here (10 s), so
 * a follower that waited for one instead of reading would time the test out.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { StoredEvent } from "../../src/events/event-bus.js";
import { FeedFollower, type FeedFollowerTiming } from "../../src/http/feed-follower.js";
import type { FeedPage } from "../../src/store/event-feed.js";

type FeedEvent = StoredEvent & { cursor: string };

function event(n: number): FeedEvent {
  return {
    specversion: "1.0",
    id: `evt_${n}`,
    source: "/orgs/default/agents/agt_1",
    type: "dev.wardrik.turn.completed",
    time: new Date().toISOString(),
    datacontenttype: "application/json",
    seq: n,
    run: "run_1",
    data: {},
    agent: "agt_1",
    org: "default",
    cursor: String(n),
  };
}

const TIMING: FeedFollowerTiming = { pollMs: 10_000, readOnPoll: true, heldBackFirstMs: 5, keepAliveMs: 60_000, pageSize: 2 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A feed whose events become readable when `commit` says, and whose reads can
 * be held open (`holdReads`) to let a wake-up land in the middle of one.
 */
class MemoryFeed {
  readable: FeedEvent[] = [];
  heldBy: string | undefined;
  reads: { at: number; after: string }[] = [];
  sent: FeedEvent[] = [];
  keepAlives = 0;
  open = true;
  private gate: Promise<void> | undefined;
  private release: (() => void) | undefined;
  private readStarted: (() => void) | undefined;

  holdReads(): Promise<void> {
    this.gate = new Promise((r) => (this.release = r));
    return new Promise((r) => (this.readStarted = r));
  }

  releaseReads(): void {
    this.gate = undefined;
    this.release?.();
  }

  io = {
    read: async (after: string, limit: number): Promise<FeedPage> => {
      this.reads.push({ at: Date.now(), after });
      this.readStarted?.();
      this.readStarted = undefined;
      const events = this.readable.filter((e) => Number(e.cursor) > Number(after)).slice(0, limit);
      const heldBy = this.heldBy;
      if (this.gate) await this.gate;
      return { events, cursor: events.at(-1)?.cursor ?? after, ...(heldBy ? { heldBy } : {}) };
    },
    send: async (events: FeedEvent[]) => {
      this.sent.push(...events);
    },
    keepAlive: async () => {
      this.keepAlives++;
    },
    open: () => this.open,
  };
}

async function until(what: string, check: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(2);
  }
}

let followers: FeedFollower[] = [];
afterEach(() => {
  for (const f of followers) f.stop();
  followers = [];
});

function follow(feed: MemoryFeed, timing: Partial<FeedFollowerTiming> = {}): { follower: FeedFollower; run: Promise<void> } {
  const follower = new FeedFollower("0", feed.io, { ...TIMING, ...timing });
  followers.push(follower);
  return { follower, run: follower.run() };
}

describe("FeedFollower", () => {
  it("reads the backlog page by page, then waits for a wake-up", async () => {
    const feed = new MemoryFeed();
    feed.readable = [1, 2, 3, 4, 5].map(event);
    const { follower } = follow(feed);
    await until("the backlog sent", () => feed.sent.length === 5);
    // Pages of two: 2, 2, 1 (a short page ends the reading).
    expect(feed.reads.map((r) => r.after)).toEqual(["0", "2", "4"]);
    await sleep(50);
    expect(feed.reads).toHaveLength(3);
    feed.readable.push(event(6));
    follower.wake();
    await until("the new event sent", () => feed.sent.length === 6);
    expect(feed.sent.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("a wake-up that lands during a read makes it read again at once, not at the next poll", async () => {
    const feed = new MemoryFeed();
    const { follower } = follow(feed);
    await until("the first read", () => feed.reads.length === 1);
    await sleep(20);
    const started = feed.holdReads();
    follower.wake();
    await started;
    // The read under way has taken its snapshot; this event commits after it and wakes the follower mid-read.
    feed.readable.push(event(1));
    follower.wake();
    feed.releaseReads();
    await until("the event committed during the read", () => feed.sent.length === 1);
  });

  it("events held back by an older transaction: reads again soon, then less often while the same one holds them", async () => {
    const feed = new MemoryFeed();
    feed.heldBy = "901";
    follow(feed);
    await until("several reads while held back", () => feed.reads.length >= 6);
    const gaps = feed.reads.slice(1).map((r, i) => r.at - feed.reads[i]!.at);
    // The first retry comes after heldBackFirstMs, not the 10 s poll; later ones wait about as long as it has been held.
    expect(gaps[0]).toBeLessThan(1000);
    expect(gaps.at(-1)!).toBeGreaterThanOrEqual(gaps[0]!);
    // Released: the event comes on the next retry, with no wake-up.
    feed.heldBy = undefined;
    feed.readable.push(event(1));
    await until("the released event", () => feed.sent.length === 1);
    // Nothing held any more: the follower waits for a wake-up or the poll.
    const reads = feed.reads.length;
    await sleep(100);
    expect(feed.reads.length).toBe(reads);
  });

  it("another transaction holding events starts the retries over at the first wait", async () => {
    const feed = new MemoryFeed();
    feed.heldBy = "901";
    const { follower } = follow(feed);
    await sleep(300);
    const before = feed.reads.length;
    feed.heldBy = "902";
    follower.wake();
    await until("two reads after the change", () => feed.reads.length >= before + 2);
    const a = feed.reads[before]!.at;
    const b = feed.reads[before + 1]!.at;
    // Held by 901 for 300 ms, the follower waited up to 300 ms; 902 is new, so the next wait is short again.
    expect(b - a).toBeLessThan(150);
  });

  it("on SQLite (no reads on poll) a quiet follower only sends keep-alives", async () => {
    const feed = new MemoryFeed();
    follow(feed, { pollMs: 10, readOnPoll: false, keepAliveMs: 50 });
    await until("a keep-alive", () => feed.keepAlives >= 2);
    expect(feed.reads).toHaveLength(1);
  });

  it("on PostgreSQL a quiet follower reads on every poll", async () => {
    const feed = new MemoryFeed();
    follow(feed, { pollMs: 10, readOnPoll: true });
    await until("reads on poll", () => feed.reads.length >= 4);
  });

  it("ends when stopped or when the client leaves", async () => {
    const a = new MemoryFeed();
    const first = follow(a);
    await until("the first read", () => a.reads.length === 1);
    first.follower.stop();
    await first.run;
    const b = new MemoryFeed();
    const second = follow(b, { pollMs: 10 });
    await until("the first read", () => b.reads.length === 1);
    b.open = false;
    await second.run;
  });
});
