/**
 * Event filters apply in the database, before the limit: paging through a few
 * hundred mixed events with `type` and `limit` finds every match, per agent,
 * on the per-agent stream, and on the org-wide feed.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createProject, readSse, short, type TestProject, type WireEvent } from "../helpers/spawn-daemon.js";

let p: TestProject;
let helper: string;
let other: string;
const TURNS = 24;

beforeAll(async () => {
  p = await createProject({
    scripts: { quiet: "steps:\n  - text: quiet reply\n" },
    files: { "agents/quiet.md": "---\ndescription: Answers without tools.\nmodel: quiet\n---\nBe quiet.\n" },
  });
  helper = await p.agentId("helper");
  other = await p.agentId("quiet");
  for (let i = 0; i < TURNS / 2; i++) {
    await Promise.all([p.send(helper, `note ${i}`, `c${i}`), p.send(other, `hush ${i}`)]);
  }
}, 180_000);

interface FeedEvent extends WireEvent {
  cursor: string;
}

describe("event filters", () => {
  it("per agent: type and limit page through every match, and only matches", async () => {
    const all = await p.events(helper);
    expect(all.length).toBeGreaterThan(150);
    const expected = all.filter((e) => short(e.type) === "turn.completed").map((e) => e.seq);
    expect(expected).toHaveLength(TURNS / 2);
    const seen: number[] = [];
    let after = 0;
    for (;;) {
      const page = await p.apiOk<{ events: WireEvent[] }>("GET", `/v1/agents/${helper}/events?type=turn.completed&limit=2&after=${after}`);
      expect(page.events.length).toBeLessThanOrEqual(2);
      if (page.events.length === 0) break;
      for (const e of page.events) expect(short(e.type)).toBe("turn.completed");
      seen.push(...page.events.map((e) => e.seq));
      after = page.events.at(-1)!.seq;
    }
    expect(seen).toEqual(expected);
  });

  it("per agent: patterns (call.*) and full type names mix", async () => {
    const all = await p.events(helper);
    const page = await p.apiOk<{ events: WireEvent[] }>(
      "GET",
      `/v1/agents/${helper}/events?type=call.*,dev.wardrik.turn.started&limit=10000`,
    );
    const want = all.filter((e) => short(e.type).startsWith("call.") || short(e.type) === "turn.started").map((e) => e.seq);
    expect(page.events.map((e) => e.seq)).toEqual(want);
  });

  it("per agent stream: only the filtered types, backlog first", async () => {
    const res = await fetch(`${p.url}/v1/agents/${helper}/events/stream?type=turn.completed`, {
      headers: { authorization: `Bearer ${p.token}` },
    });
    const got: string[] = [];
    await readSse(res, (f) => {
      if (f.event === "event") got.push(short((JSON.parse(f.data) as WireEvent).type));
      return got.length === TURNS / 2;
    });
    expect(new Set(got)).toEqual(new Set(["turn.completed"]));
  });

  it("org-wide feed: every agent's events in commit order, pages by cursor, filters by type and agent", async () => {
    const everything: FeedEvent[] = [];
    let cursor = "";
    for (;;) {
      const page = await p.apiOk<{ events: FeedEvent[]; cursor: string }>("GET", `/v1/events?limit=97${cursor ? `&after=${cursor}` : ""}`);
      everything.push(...page.events);
      if (page.events.length === 0) break;
      cursor = page.cursor;
    }
    const perAgent = [...(await p.events(helper)), ...(await p.events(other))];
    expect(everything).toHaveLength(perAgent.length);
    // Each agent's events keep their order inside the feed.
    for (const agent of [helper, other]) {
      const seqs = everything.filter((e) => e.source.endsWith(agent)).map((e) => e.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    }
    const completedOfOther = await p.apiOk<{ events: FeedEvent[] }>("GET", `/v1/events?type=turn.completed&agent=${other}&limit=3`);
    expect(completedOfOther.events).toHaveLength(3);
    for (const e of completedOfOther.events) {
      expect(short(e.type)).toBe("turn.completed");
      expect(e.source.endsWith(other)).toBe(true);
    }
    const bad = await p.api("GET", "/v1/events?after=not-a-cursor");
    expect(bad.status).toBe(400);
  });

  it("org-wide stream: live=only shows what comes next, with cursors to resume from", async () => {
    const res = await fetch(`${p.url}/v1/events/stream?live=only&type=turn.completed`, { headers: { authorization: `Bearer ${p.token}` } });
    const got: FeedEvent[] = [];
    const reading = readSse(res, (f) => {
      if (f.event === "event") got.push({ ...(JSON.parse(f.data) as FeedEvent), cursor: f.id! });
      return got.length === 1;
    });
    // The response's headers came with the stream's first write (": following"), made once it listens and knows
    // where "now" is: what is sent from here on comes next.
    const sent = await p.send(other, "after the stream began");
    await reading;
    expect(got[0]!.run).toBe(sent.run);
    const after = await p.apiOk<{ events: FeedEvent[] }>("GET", `/v1/events?after=${got[0]!.cursor}`);
    expect(after.events).toHaveLength(0);
  });
  it("org-wide stream: Last-Event-ID resumes right after that event, with agent= and a type pattern applied to backlog and live", async () => {
    const filter = `agent=${other}&type=turn.*`;
    const expected = (await p.apiOk<{ events: FeedEvent[] }>("GET", `/v1/events?${filter}&limit=10000`)).events;
    expect(expected.length).toBeGreaterThanOrEqual(TURNS);
    const k = Math.floor(expected.length / 2);
    // A reconnecting EventSource keeps its URL (here ?after= the start, and live=only) and adds the header: the header wins.
    const res = await fetch(`${p.url}/v1/events/stream?${filter}&after=${expected[0]!.cursor}&live=only`, {
      headers: { authorization: `Bearer ${p.token}`, "last-event-id": expected[k]!.cursor },
    });
    expect(res.status).toBe(200);
    const backlog = expected.length - k - 1;
    const got: FeedEvent[] = [];
    let caughtUp: () => void = () => undefined;
    const backlogRead = new Promise<void>((resolve) => (caughtUp = resolve));
    const reading = readSse(res, (f) => {
      if (f.event !== "event") return false;
      const e = JSON.parse(f.data) as FeedEvent;
      expect(f.id).toBe(e.cursor);
      got.push(e);
      if (got.length === backlog) caughtUp();
      return got.length === backlog + 2;
    });
    await backlogRead;
    expect(got.map((e) => e.id)).toEqual(expected.slice(k + 1).map((e) => e.id));
    // Live: the other agent's turn shows, the helper's (sent first) does not.
    await p.send(helper, "not for this stream", "live");
    const sent = await p.send(other, "for this stream");
    await reading;
    expect(got.slice(backlog).map((e) => [short(e.type), e.run])).toEqual([
      ["turn.started", sent.run],
      ["turn.completed", sent.run],
    ]);
    for (const e of got) expect(e.source.endsWith(other)).toBe(true);
  });

  it("per agent stream: an empty pattern (`type=`, a trailing comma) is ignored, in the backlog and live alike", async () => {
    for (const type of ["", "turn.completed,"]) {
      const last = (await p.events(other)).at(-1)!.seq;
      const res = await fetch(`${p.url}/v1/agents/${other}/events/stream?after=${last - 5}&type=${type}`, {
        headers: { authorization: `Bearer ${p.token}` },
      });
      const got: WireEvent[] = [];
      const reading = readSse(res, (f) => {
        if (f.event === "event") got.push(JSON.parse(f.data) as WireEvent);
        return got.some((e) => e.seq > last && short(e.type) === "turn.completed");
      });
      // The turn runs after the stream is open: its events come live.
      const sent = await p.send(other, `live with type=${type}`);
      await reading;
      const types = got.map((e) => short(e.type));
      if (type === "") expect(types).toContain("message.queued");
      else expect(new Set(types)).toEqual(new Set(["turn.completed"]));
      expect(got.at(-1)!.run).toBe(sent.run);
    }
  });
  it("per agent stream: conversation= shows that conversation's messages and turns only, backlog then live, and resumes with Last-Event-ID", async () => {
    const all = await p.events(helper);
    const runsOf = (key: string) =>
      new Set(all.filter((e) => short(e.type) === "turn.started" && e.data.conversation === key).map((e) => e.run!));
    const ofC3 = (e: WireEvent, runs: Set<string>) =>
      e.run !== undefined ? runs.has(e.run) : short(e.type) === "message.queued" && e.data.conversation === "c3";
    const runs = runsOf("c3");
    expect(runs.size).toBe(1);
    const expected = all.filter((e) => ofC3(e, runs)).map((e) => e.seq);
    expect(expected.length).toBeGreaterThan(5);

    // The backlog: exactly c3's events, though the other conversations' turns ran at the same time.
    const backlog = await (
      await openStream(`/v1/agents/${helper}/events/stream?conversation=c3`, {}, (got) => got.at(-1)?.seq === expected.at(-1))
    ).read;
    expect(backlog.events.map((e) => e.seq)).toEqual(expected);

    // Resumed after one of them: the rest, then live turns of c3 only (another conversation's turn runs first), with their text only.
    const k = Math.floor(expected.length / 2);
    const resumed = await openStream(
      `/v1/agents/${helper}/events/stream?conversation=c3&after=0`,
      { "last-event-id": String(expected[k]) },
      (got) => got.some((e) => e.run !== undefined && !runs.has(e.run) && short(e.type) === "turn.completed"),
    );
    await p.send(helper, "another conversation's turn", "c4");
    const sent = await p.send(helper, "c3's next turn", "c3");
    const live = await resumed.read;
    const liveRuns = new Set([...runs, sent.run]);
    expect(live.events.slice(0, expected.length - k - 1).map((e) => e.seq)).toEqual(expected.slice(k + 1));
    for (const e of live.events) expect(ofC3(e, liveRuns), `${e.type} of ${e.run}`).toBe(true);
    expect(live.events.filter((e) => e.run === sent!.run).map((e) => short(e.type))).toContain("turn.started");
    for (const run of live.deltaRuns) expect(liveRuns.has(run)).toBe(true);
  });

  it("per agent stream: conversation= opened before the conversation exists follows its first turn", async () => {
    const reading = await openStream(
      `/v1/agents/${helper}/events/stream?conversation=fresh-conversation&type=message.queued,turn.*`,
      {},
      (got) => got.some((e) => short(e.type) === "turn.completed"),
    );
    await p.send(helper, "not this one", "c5");
    const sent = await p.send(helper, "the first message", "fresh-conversation");
    const { events } = await reading.read;
    expect(events.map((e) => [short(e.type), e.run ?? e.data.conversation])).toEqual([
      ["message.queued", "fresh-conversation"],
      ["turn.started", sent.run],
      ["turn.completed", sent.run],
    ]);
  });

  it("per agent stream: run= shows one turn's events only", async () => {
    const all = await p.events(helper);
    const run = all.find((e) => short(e.type) === "turn.started" && e.data.conversation === "c7")!.run!;
    const expected = all.filter((e) => e.run === run).map((e) => e.seq);
    const got = await (
      await openStream(`/v1/agents/${helper}/events/stream?run=${run}`, {}, (events) => events.at(-1)?.seq === expected.at(-1))
    ).read;
    expect(got.events.map((e) => e.seq)).toEqual(expected);
    const bad = await p.api("GET", `/v1/agents/${helper}/events/stream?conversation=`);
    expect(bad.status).toBe(400);
  });
});

/** Opens the stream at `path`; once it answers, the reading until `done` says so: the events and the runs of the live text. */
async function openStream(
  path: string,
  headers: Record<string, string>,
  done: (events: WireEvent[]) => boolean,
): Promise<{ read: Promise<{ events: WireEvent[]; deltaRuns: string[] }> }> {
  const res = await fetch(`${p.url}${path}`, { headers: { authorization: `Bearer ${p.token}`, ...headers } });
  expect(res.status).toBe(200);
  const events: WireEvent[] = [];
  const deltaRuns: string[] = [];
  const reading = readSse(res, (f) => {
    if (f.event === "delta") deltaRuns.push((JSON.parse(f.data) as { run: string }).run);
    if (f.event === "event") events.push(JSON.parse(f.data) as WireEvent);
    return done(events);
  });
  // In an object: an async function's promise would wait for the one returned.
  return { read: reading.then(() => ({ events, deltaRuns })) };
}
