/** The Slack tables on the run's dialect (SQLite, PostgreSQL): requests taken once, taken over from a process that stopped, messages claimed once. */
import { afterEach, describe, expect, it } from "vitest";
import type { Db } from "../../src/store/db.js";
import { SlackTable, TAKEN_BY_OTHER_MS } from "../../src/store/slack.js";
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

  it("claims a message to post once; a failed post can be claimed again; the ts and state are kept", async () => {
    const t = await table();
    const m = { kind: "approval" as const, ref: "call_1", channel: "C1", threadTs: "1.1", state: "open" };
    expect(await t.claim(m, t0)).toBe(true);
    expect(await t.claim(m, t0)).toBe(false);
    await t.unclaim("approval", "call_1");
    expect(await t.claim(m, t0)).toBe(true);
    await t.posted("approval", "call_1", "1.2", t0);
    await t.unclaim("approval", "call_1"); // a posted message is not given up
    await t.setState("approval", "call_1", "decided", later(5), "U1");
    expect(await t.message("approval", "call_1")).toMatchObject({
      channel: "C1",
      thread_ts: "1.1",
      ts: "1.2",
      state: "decided",
      decided_by: "U1",
    });
    expect(await t.message("reply", "call_1")).toBeUndefined();
  });
});
