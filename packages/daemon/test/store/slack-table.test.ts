/**
 * The Slack tables on the run's dialect (SQLite, PostgreSQL): requests taken once, taken over from a process that stopped,
 * messages posted and updated under one node's claim, which another node takes over once it runs out.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Db } from "../../src/store/db.js";
import { CLAIM_MS, SlackTable, TAKEN_BY_OTHER_MS } from "../../src/store/slack.js";
import { openTestDb, TEST_DIALECT } from "../helpers/test-database.js";

const open: Db[] = [];
afterEach(async () => {
  for (const db of open.splice(0)) await db.close();
});
async function table(): Promise<SlackTable> {
  const { db } = await openTestDb();
  open.push(db);
  return new SlackTable(db);
}

const t0 = new Date("2026-01-01T00:00:00Z");
const later = (ms: number) => new Date(t0.getTime() + ms);

describe(`SlackTable on ${TEST_DIALECT}`, () => {
  it("takes a request once, however many copies arrive at the same moment", async () => {
    const t = await table();
    const keys = ["event:Ev1", "message:C1:1.1"];
    const taken = await Promise.all(Array.from({ length: 6 }, () => t.take(keys, "me", t0)));
    expect(taken.filter(Boolean)).toHaveLength(1);
  });

  it("a message that comes as two events (two event_ids) is taken by the first only", async () => {
    const t = await table();
    expect(await t.take(["event:Ev1", "message:C1:1.1"], "me", t0)).toBe(true);
    expect(await t.take(["event:Ev2", "message:C1:1.1"], "me", t0)).toBe(false);
  });

  it("a finished request stays taken, also for another process; a released one may be taken again", async () => {
    const t = await table();
    await t.take(["event:Ev1"], "me", t0);
    await t.finish(["event:Ev1"]);
    expect(await t.take(["event:Ev1"], "other", later(TAKEN_BY_OTHER_MS * 10))).toBe(false);
    await t.take(["event:Ev2"], "me", t0);
    await t.release(["event:Ev2"], "me");
    expect(await t.take(["event:Ev2"], "me", t0)).toBe(true);
  });

  it("a request another process took and never finished is taken over once that process must be gone", async () => {
    const t = await table();
    await t.take(["event:Ev1"], "stopped", t0);
    expect(await t.take(["event:Ev1"], "me", later(1000))).toBe(false);
    expect(await t.take(["event:Ev1"], "me", later(TAKEN_BY_OTHER_MS + 1000))).toBe(true);
    // Now it is mine: a copy arriving at once is a repeat.
    expect(await t.take(["event:Ev1"], "me", later(TAKEN_BY_OTHER_MS + 1001))).toBe(false);
  });

  it("forgets requests received before a time", async () => {
    const t = await table();
    await t.take(["event:old"], "me", t0);
    await t.finish(["event:old"]);
    await t.purge(later(1));
    expect(await t.take(["event:old"], "me", later(2))).toBe(true);
  });

  it("claims a message to post once, its intent counted; a refused post can be claimed again; the ts and state are kept", async () => {
    const t = await table();
    const m = { kind: "approval" as const, ref: "call_1", channel: "C1", threadTs: "1.1", state: "open" };
    expect(await t.claim(m, "a", t0)).toEqual({ earlier: 0 });
    expect(await t.claim(m, "a", t0)).toBeUndefined();
    await t.notPosted("approval", "call_1", false); // Slack refused it: that request posted nothing
    expect(await t.claim(m, "a", t0)).toEqual({ earlier: 0 });
    await t.posted("approval", "call_1", "1.2", t0);
    await t.notPosted("approval", "call_1", false); // a posted message is not given up
    await t.setState("approval", "call_1", "decided", later(5), "U1");
    expect(await t.message("approval", "call_1")).toMatchObject({
      channel: "C1",
      thread_ts: "1.1",
      ts: "1.2",
      state: "decided",
      decided_by: "U1",
      sent: 1,
    });
    expect(await t.message("reply", "call_1")).toBeUndefined();
  });

  it("a post whose answer was lost leaves its intent: the next claim knows an earlier request may have posted", async () => {
    const t = await table();
    const m = { kind: "reply" as const, ref: "run_9", channel: "C1", threadTs: "1.1", state: "streaming" };
    expect(await t.claim(m, "a", t0)).toEqual({ earlier: 0 });
    await t.notPosted("reply", "run_9", true); // no answer: it may have posted
    expect(await t.claim(m, "b", t0)).toEqual({ earlier: 1 });
    await t.possibleDuplicate("reply", "run_9");
    await t.posted("reply", "run_9", "1.5", t0);
    expect(await t.message("reply", "run_9")).toMatchObject({ ts: "1.5", sent: 2, possible_duplicates: 1 });
  });

  it("a restarted node ends the claims its earlier process held, so their work is done at once", async () => {
    const t = await table();
    const m = { kind: "approval" as const, ref: "call_8", channel: "C1", threadTs: "1.1", state: "open" };
    await t.claim(m, "n1", t0); // the process died holding it
    expect(await t.claim(m, "n2", later(1))).toBeUndefined();
    await t.releaseClaimsOf("n1");
    expect(await t.claim(m, "n1", later(2))).toEqual({ earlier: 1 });
  });

  it("two nodes claiming one post at the same moment: one wins; a dead node's claim is taken over once it runs out", async () => {
    const t = await table();
    const m = { kind: "reply" as const, ref: "run_1", channel: "C1", threadTs: "1.1", state: "streaming" };
    const both = await Promise.all([t.claim(m, "a", t0), t.claim(m, "b", t0)]);
    expect(both.filter((x) => x !== undefined)).toHaveLength(1);
    const winner = both[0] ? "a" : "b";
    const loser = winner === "a" ? "b" : "a";
    // The winner died before it posted: its claim holds until it runs out, then the other node posts.
    expect(await t.claim(m, loser, later(CLAIM_MS - 1))).toBeUndefined();
    expect(await t.claim(m, loser, later(CLAIM_MS + 1))).toEqual({ earlier: 1 });
    expect(await t.message("reply", "run_1")).toMatchObject({ claimed_by: loser, ts: null });
    await t.posted("reply", "run_1", "1.2", later(CLAIM_MS + 2));
    // Posted: no node posts it again, however old the claim.
    expect(await t.claim(m, winner, later(10 * CLAIM_MS))).toBeUndefined();
    expect(await t.message("reply", "run_1")).toMatchObject({ ts: "1.2", claimed_by: null });
  });

  it("an update of a posted message is claimed by one node while in its state; a dropped claim may be taken again", async () => {
    const t = await table();
    const m = { kind: "approval" as const, ref: "call_2", channel: "C1", threadTs: "1.1", state: "open" };
    expect(await t.claimUpdate("approval", "call_2", "open", "a", t0)).toBe(false); // nothing posted yet
    await t.claim(m, "a", t0);
    await t.posted("approval", "call_2", "1.3", t0);
    const both = await Promise.all([
      t.claimUpdate("approval", "call_2", "open", "a", t0),
      t.claimUpdate("approval", "call_2", "open", "b", t0),
    ]);
    expect(both.filter(Boolean)).toHaveLength(1);
    const winner = both[0] ? "a" : "b";
    await t.dropClaim("approval", "call_2", winner);
    expect(await t.claimUpdate("approval", "call_2", "open", "b", later(1))).toBe(true);
    await t.setState("approval", "call_2", "decided", later(2));
    // Decided: no node updates it as open again, even after the claim would have run out.
    expect(await t.claimUpdate("approval", "call_2", "open", "a", later(10 * CLAIM_MS))).toBe(false);
    expect(await t.message("approval", "call_2")).toMatchObject({ state: "decided", claimed_by: null });
  });

  it("keeps who clicked a decision on the open message, and forgets them when their click decided nothing", async () => {
    const t = await table();
    await t.claim({ kind: "approval", ref: "call_3", channel: "C1", threadTs: "1.1", state: "open" }, "a", t0);
    await t.posted("approval", "call_3", "1.4", t0);
    await t.noteDecider("call_3", "U1");
    expect((await t.message("approval", "call_3"))?.decided_by).toBe("U1");
    await t.forgetDecider("call_3", "U2"); // someone else's failed click leaves U1
    expect((await t.message("approval", "call_3"))?.decided_by).toBe("U1");
    await t.forgetDecider("call_3", "U1");
    expect((await t.message("approval", "call_3"))?.decided_by).toBeNull();
  });
});
