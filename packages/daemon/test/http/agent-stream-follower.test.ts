/**
 * The loop behind one agent's event stream, against a record in memory the
 * test appends to (as this node's and other nodes' commits would) and a
 * client that records what it is sent: order without gaps when other nodes
 * write between this node's events, filtered streams, its own look, and
 * keep-alives that go out on time however often the stream is woken.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { StoredEvent } from "../../src/events/event-bus.js";
import { AgentStreamFollower, type AgentStreamTiming } from "../../src/http/agent-stream-follower.js";
import { waitFor } from "../helpers/wait.js";

function event(seq: number, type = "call.started"): StoredEvent {
  return { agent: "agt_s", org: "default", seq, id: `ev_${seq}`, type: `dev.wardrik.${type}`, data: {} } as unknown as StoredEvent;
}

const running: AgentStreamFollower[] = [];
afterEach(() => {
  for (const f of running.splice(0)) f.stop();
});

/** A follower over `rows`, showing `shows`; returns what the client got. `storeShows`: what the store's read narrows to (default `shows`). */
function follow(
  rows: StoredEvent[],
  timing: Partial<AgentStreamTiming> = {},
  shows: (e: StoredEvent) => boolean = () => true,
  storeShows: (e: StoredEvent) => boolean = shows,
) {
  const sent: number[] = [];
  let reads = 0;
  let keepAlives = 0;
  const f = new AgentStreamFollower(
    0,
    shows,
    {
      read: (after, limit) => {
        reads++;
        return Promise.resolve(rows.filter((e) => e.seq > after && storeShows(e)).slice(0, limit));
      },
      send: (items) => Promise.resolve(sent.push(...items.flatMap((e) => ("frame" in e ? [] : [e.seq])))),
      keepAlive: () => Promise.resolve(keepAlives++),
      open: () => true,
    },
    { lookMs: undefined, keepAliveMs: 60_000, pageSize: 100, ...timing },
  );
  running.push(f);
  const done = f.run();
  return { f, sent, done, reads: () => reads, keepAlives: () => keepAlives };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("an agent's event stream", () => {
  it("leaves out what a read brings that the stream does not show, and reads on past a full page of them", async () => {
    // The store narrows less than the stream (a conversation's events of no turn): pages carry events it leaves out.
    const rows = Array.from({ length: 250 }, (_, i) => event(i + 1, i % 3 === 0 ? "turn.completed" : "message.queued"));
    const s = follow(
      rows,
      { pageSize: 100 },
      (e) => e.type.endsWith("turn.completed"),
      () => true,
    );
    const want = rows.filter((e) => e.type.endsWith("turn.completed")).map((e) => e.seq);
    await waitFor(() => s.sent.length === want.length, "every shown event of three pages");
    expect(s.sent).toEqual(want);
    expect(s.reads()).toBe(3);
  });

  it("reads the store first when a bus event skips numbers: another node wrote those between", async () => {
    const rows: StoredEvent[] = [];
    const s = follow(rows);
    await waitFor(() => s.reads() === 1, "the first catch-up");
    // Another node committed 1 and its word is still on the way; this node committed 2.
    rows.push(event(1), event(2));
    s.f.published(rows[1]!);
    await waitFor(() => s.sent.length === 2, "both events", 5000);
    rows.push(event(3));
    s.f.published(rows[2]!);
    await waitFor(() => s.sent.length === 3, "the next one");
    expect(s.sent).toEqual([1, 2, 3]);
    // The event that follows on came from the bus: no read for it.
    expect(s.reads()).toBe(2);
  });

  it("a filtered stream counts the events it does not show, so its own node's events need no read", async () => {
    const rows: StoredEvent[] = [];
    const s = follow(rows, {}, (e) => e.type.endsWith("turn.completed"));
    await waitFor(() => s.reads() === 1, "the first catch-up");
    for (const [seq, type] of [
      [1, "turn.started"],
      [2, "call.started"],
      [3, "turn.completed"],
    ] as const) {
      rows.push(event(seq, type));
      s.f.published(rows.at(-1)!);
    }
    await waitFor(() => s.sent.length === 1, "the turn's end");
    expect(s.sent).toEqual([3]);
    expect(s.reads()).toBe(1);
  });

  it("reads on its own every lookMs when no word comes", async () => {
    const rows: StoredEvent[] = [];
    const s = follow(rows, { lookMs: 20 });
    // A read after the first with no word in between: it looked on its own.
    await waitFor(() => s.reads() >= 2, "a look of its own", 2000, 5);
    rows.push(event(1), event(2));
    await waitFor(() => s.sent.length === 2, "the events nobody told it about", 2000);
    expect(s.sent).toEqual([1, 2]);
  });

  it("sends a keep-alive on time while pokes that bring nothing keep waking it", async () => {
    const s = follow([], { keepAliveMs: 100 });
    const poking = setInterval(() => s.f.poked(), 10);
    try {
      // Two keep-alives 100 ms apart; pokes that put the keep-alive off would keep it from ever coming.
      await waitFor(() => s.keepAlives() >= 2, "two keep-alives while pokes keep coming", 5000, 10);
    } finally {
      clearInterval(poking);
    }
  });

  it("a delta counts as a write, and stop() ends the loop", async () => {
    // Long enough a keep-alive time that a loaded machine's late timers cannot make one due.
    const s = follow([], { keepAliveMs: 1000 });
    const writing = setInterval(() => s.f.sendAlong(Buffer.from("event: delta\ndata: {}\n\n")), 10);
    await sleep(1500);
    clearInterval(writing);
    expect(s.keepAlives()).toBe(0);
    s.f.stop();
    await s.done;
  });

  it("sends live events and deltas in order, in one write once the work under way has settled", async () => {
    const writes: (number | string)[][] = [];
    let settle: (() => void) | undefined;
    const f = new AgentStreamFollower(
      0,
      () => true,
      {
        read: () => Promise.resolve([]),
        send: (items) => Promise.resolve(writes.push(items.map((e) => ("frame" in e ? Buffer.from(e.frame).toString() : e.seq)))),
        settle: () => new Promise<void>((resolve) => (settle = resolve)),
        keepAlive: () => Promise.resolve(),
        open: () => true,
      },
      { lookMs: undefined, keepAliveMs: 60_000, pageSize: 100 },
    );
    running.push(f);
    void f.run();
    await sleep(10);
    // A commit, the model's live text, the next commit: three steps of a turn before the work settles.
    f.published(event(1));
    await waitFor(() => settle !== undefined, "the stream waiting for the work to settle");
    f.sendAlong(Buffer.from("delta"));
    f.published(event(2));
    f.published(event(3));
    expect(writes).toEqual([]);
    settle!();
    await waitFor(() => writes.length === 1, "one write");
    expect(writes).toEqual([[1, "delta", 2, 3]]);
  });

  it("stops reading a long backlog once the client has left", async () => {
    const rows = Array.from({ length: 1000 }, (_, i) => event(i + 1));
    let open = true;
    let reads = 0;
    const f = new AgentStreamFollower(
      0,
      () => true,
      {
        read: (after, limit) => {
          reads++;
          return Promise.resolve(rows.filter((e) => e.seq > after).slice(0, limit));
        },
        send: () => Promise.resolve((open = false)),
        keepAlive: () => Promise.resolve(),
        open: () => open,
      },
      { lookMs: undefined, keepAliveMs: 60_000, pageSize: 100 },
    );
    await f.run();
    expect(reads).toBe(1);
  });
});
