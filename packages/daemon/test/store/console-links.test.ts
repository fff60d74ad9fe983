/** Console sign-in links on the run's dialect (SQLite, PostgreSQL): each works once, and not after it expired. */
import { afterEach, describe, expect, it } from "vitest";
import { ConsoleLinksTable } from "../../src/store/console-links.js";
import type { Db } from "../../src/store/db.js";
import { openTestDb, TEST_DIALECT } from "../helpers/test-database.js";

const open: Db[] = [];
afterEach(async () => {
  for (const db of open.splice(0)) await db.close();
});
async function links(): Promise<{ db: Db; links: ConsoleLinksTable }> {
  const { db } = await openTestDb();
  open.push(db);
  return { db, links: new ConsoleLinksTable(db) };
}

const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString();

describe(`ConsoleLinksTable on ${TEST_DIALECT}`, () => {
  it("gives a link's sealed token once; of many takes at once, one wins", async () => {
    const { links: l } = await links();
    await l.add("hash-1", "sealed-1", at(2), at(0));
    const takes = await Promise.all(Array.from({ length: 8 }, () => l.take("hash-1", at(1))));
    expect(takes.filter((t) => t !== undefined)).toEqual(["sealed-1"]);
    expect(await l.take("hash-1", at(1))).toBeUndefined();
    expect(await l.take("unknown", at(1))).toBeUndefined();
  });

  it("an expired link gives nothing, and making a new link sweeps the expired ones", async () => {
    const { db, links: l } = await links();
    await l.add("old", "sealed-old", at(2), at(0));
    await l.add("older", "sealed-older", at(1), at(0));
    expect(await l.take("old", at(2))).toBeUndefined();
    await l.add("new", "sealed-new", at(7), at(5));
    const rows = await db.all<{ code_hash: string }>("SELECT code_hash FROM console_links ORDER BY code_hash");
    expect(rows.map((r) => r.code_hash)).toEqual(["new"]);
  });
});
