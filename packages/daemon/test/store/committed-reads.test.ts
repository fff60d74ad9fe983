/**
 * Followers read the record through `Db.committed`: rows of a transaction
 * still open (paused at an await, as every transaction of this process can
 * be) are not there for them, so a follower never shows an event that then
 * rolls back. On SQLite a plain read shares the writing connection and would
 * see such a row; the test shows that too, as the reason for the rule.
 */
import { describe, expect, it } from "vitest";
import { EventsTable } from "../../src/store/events.js";
import { openTestDb, TEST_DIALECT } from "../helpers/test-database.js";

const INSERT = "INSERT INTO events (agent_id, seq, id, org, type, time, subject, run, data) VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, ?)";

describe("committed reads", () => {
  it("do not see the events of a transaction still open, which then rolls back", async () => {
    const { db } = await openTestDb();
    try {
      const events = new EventsTable(db);
      let inside!: () => void;
      const written = new Promise<void>((r) => (inside = r));
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      const tx = db.transaction(async (t) => {
        await t.run(INSERT, ["agt_c", 1, "ev_phantom", "default", "dev.wardrik.turn.started", new Date().toISOString(), "{}"]);
        inside();
        // Paused at an await (a macrotask away), as a transaction waiting on anything but its own statements is.
        await released;
        throw new Error("rolled back on purpose");
      });
      await written;
      expect(await events.list("agt_c", 0, 10)).toEqual([]);
      expect(await events.lastSeq("agt_c")).toBe(0);
      expect(await db.committed.all("SELECT id FROM events WHERE agent_id = ?", ["agt_c"])).toEqual([]);
      // The hazard itself: on SQLite a plain read runs inside the open transaction.
      const plain = await db.all("SELECT id FROM events WHERE agent_id = ?", ["agt_c"]);
      expect(plain).toEqual(TEST_DIALECT === "sqlite" ? [{ id: "ev_phantom" }] : []);
      release();
      await expect(tx).rejects.toThrow("rolled back on purpose");
      expect(await events.list("agt_c", 0, 10)).toEqual([]);
    } finally {
      await db.close();
    }
  });

  it("see what committed at once", async () => {
    const { db } = await openTestDb();
    try {
      await db.transaction((t) =>
        t.run(INSERT, ["agt_d", 1, "ev_real", "default", "dev.wardrik.turn.started", new Date().toISOString(), "{}"]),
      );
      expect((await new EventsTable(db).list("agt_d", 0, 10)).map((e) => e.id)).toEqual(["ev_real"]);
    } finally {
      await db.close();
    }
  });
});
