/**
 * `Db.exclusive`: one holder of a named lock at a time. On PostgreSQL the
 * holders are separate adapters (separate pools, as separate nodes have) on
 * one database; on SQLite, which one daemon owns, callers of one adapter.
 */
import { describe, expect, it } from "vitest";
import type { Db } from "../../src/store/db.js";
import { openDb } from "../../src/store/open-db.js";
import { openTestDb, TEST_DIALECT } from "../helpers/test-database.js";

/** Runs `fn` as the lock's holder, noting who holds it at each step; the steps yield to the others. */
async function holdAndStep(db: Db, lock: string, who: string, trace: string[], steps = 5): Promise<void> {
  await db.exclusive(lock, async () => {
    for (let i = 0; i < steps; i++) {
      trace.push(who);
      await db.get("SELECT 1 AS one");
    }
  });
}

describe(`Db.exclusive on ${TEST_DIALECT}`, () => {
  it("lets one holder of a name run at a time, across the database's adapters", async () => {
    const { db, database } = await openTestDb();
    const others = TEST_DIALECT === "postgres" ? await Promise.all([openDb(database.url), openDb(database.url)]) : [db, db];
    const handles = [db, ...others];
    try {
      const trace: string[] = [];
      await Promise.all(handles.flatMap((h, i) => [0, 1].map((k) => holdAndStep(h, "seed", `${i}.${k}`, trace))));
      // Each holder's steps come in one run, never interleaved with another's.
      const runs = trace.filter((who, i) => who !== trace[i - 1]);
      expect(runs).toHaveLength(handles.length * 2);
      expect(new Set(runs).size).toBe(runs.length);
    } finally {
      for (const h of new Set(handles)) await h.close();
    }
  });

  it("lets holders of different names run side by side", async () => {
    const { db } = await openTestDb();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = db.exclusive("a", () => held);
    // Would wait forever if "b" shared "a"'s lock.
    await db.exclusive("b", () => Promise.resolve());
    release();
    await first;
    await db.close();
  });

  it("releases the lock when the holder throws", async () => {
    const { db } = await openTestDb();
    await expect(db.exclusive("x", () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await db.exclusive("x", () => Promise.resolve(7))).toBe(7);
    await db.close();
  });
});
