/**
 * Trigger firings in the database (SQLite and PostgreSQL): a firing key
 * (trigger + schedule time, webhook ID or source event) is taken once
 * however many nodes try at the same moment; a pending firing's claim holds
 * until it expires and is then free for another node; a dead SQLite
 * process's claims are given back at start.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Db } from "../../src/store/db.js";
import { TriggerFiringsTable, type NewFiring } from "../../src/store/trigger-firings.js";
import { openTestDb } from "../helpers/test-database.js";

const opened: Db[] = [];
afterEach(async () => {
  for (const db of opened.splice(0)) await db.close();
});

let db: Db;
async function table(): Promise<TriggerFiringsTable> {
  ({ db } = await openTestDb());
  opened.push(db);
  return new TriggerFiringsTable(db);
}

let n = 0;
const firing = (fireKey: string): NewFiring => ({
  id: `fir_${String(++n).padStart(4, "0")}`,
  org: "default",
  agentId: "agt_ticker",
  triggerKey: "schedule:* * * * * *",
  fireKey,
  conversation: "ticks",
  text: `tick ${fireKey}`,
});

describe("trigger firings", () => {
  it("a firing key is taken once, however many nodes try it at the same moment", async () => {
    const t = await table();
    const now = Date.now();
    const key = "2026-12-01T09:00:00.000Z";
    const won = await Promise.all(
      ["n1", "n2", "n3", "n4"].map((node) => t.claimNew(firing(key), node, now + 30_000, new Date().toISOString())),
    );
    expect(won.filter(Boolean)).toHaveLength(1);
    const row = await t.find("agt_ticker", "schedule:* * * * * *", key);
    expect(row?.claim).toBe(["n1", "n2", "n3", "n4"][won.indexOf(true)]);
    // The next second is another firing.
    expect(await t.claimNew(firing("2026-12-01T09:00:01.000Z"), "n2", now + 30_000, new Date().toISOString())).toBe(true);
  });

  it("a pending firing's claim holds until it expires; then another node takes it, and the first cannot mark it", async () => {
    const t = await table();
    const now = Date.now();
    const f = firing("evt_1");
    expect(await t.claimNew(f, "n1", now + 30_000, new Date().toISOString())).toBe(true);
    expect(await t.claimPending("n2", now, now + 30_000, 10)).toEqual([]);
    const taken = await t.claimPending("n2", now + 30_000, now + 60_000, 10);
    expect(taken.map((r) => r.id)).toEqual([f.id]);
    expect(await t.anyDue(now + 30_000)).toBe(false);
    const iso = new Date().toISOString();
    expect(await db.transaction((tx) => t.markQueued(tx, f.id, "n1", "msg_late", iso))).toBe(false);
    expect(await db.transaction((tx) => t.markQueued(tx, f.id, "n2", "msg_1", iso))).toBe(true);
    expect((await t.find(f.agentId, f.triggerKey, f.fireKey))?.message_id).toBe("msg_1");
  });

  it("gives back every claim of pending firings (a SQLite daemon starting after a crash)", async () => {
    const t = await table();
    const now = Date.now();
    const f = firing("evt_2");
    await t.claimNew(f, "dead-process", now + 30_000, new Date().toISOString());
    expect(await t.releaseAll()).toBe(1);
    const claimed = await t.claimPending("n1", now, now + 30_000, 10);
    expect(claimed.map((r) => [r.id, r.text])).toEqual([[f.id, "tick evt_2"]]);
  });
});
