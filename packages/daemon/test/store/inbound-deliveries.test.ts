/** Inbound webhook deliveries on the run's dialect (SQLite, PostgreSQL): one fire key per delivery until it expires, then swept. */
import { afterEach, describe, expect, it } from "vitest";
import type { Db } from "../../src/store/db.js";
import { InboundDeliveriesTable } from "../../src/store/inbound-deliveries.js";
import { openTestDb, TEST_DIALECT } from "../helpers/test-database.js";

const open: Db[] = [];
afterEach(async () => {
  for (const db of open.splice(0)) await db.close();
});
async function table(): Promise<InboundDeliveriesTable> {
  const { db } = await openTestDb();
  open.push(db);
  return new InboundDeliveriesTable(db);
}

const DAY = 24 * 60 * 60 * 1000;
const t0 = Date.parse("2026-01-01T00:00:00Z");

describe(`InboundDeliveriesTable on ${TEST_DIALECT}`, () => {
  it("gives every arrival of a delivery the key of the first, even when they arrive at once", async () => {
    const t = await table();
    const keys = await Promise.all(Array.from({ length: 8 }, (_, i) => t.fireKey("acme", "push", "sha256:abc", `key-${i}`, t0, DAY)));
    expect(new Set(keys).size).toBe(1);
    expect(await t.fireKey("acme", "push", "sha256:abc", "later", t0 + DAY - 1, DAY)).toBe(keys[0]);
    // The same delivery to another webhook or org is another delivery.
    expect(await t.fireKey("acme", "deploy", "sha256:abc", "other-hook", t0, DAY)).toBe("other-hook");
    expect(await t.fireKey("beta", "push", "sha256:abc", "other-org", t0, DAY)).toBe("other-org");
  });

  it("forgets a delivery once it expires, and the sweep deletes it", async () => {
    const t = await table();
    await t.fireKey("acme", "push", "sha256:old", "first", t0, DAY);
    await t.fireKey("acme", "push", "sha256:new", "kept", t0 + DAY / 2, DAY);
    expect(await t.sweep(t0 + DAY - 1)).toBe(0);
    expect(await t.fireKey("acme", "push", "sha256:old", "second", t0 + DAY, DAY)).toBe("second");
    // "new" expires at 1.5 days, "old" (seen again at 1 day) at 2 days.
    expect(await t.sweep(t0 + 2 * DAY - 1)).toBe(1);
    expect(await t.sweep(t0 + 2 * DAY)).toBe(1);
    expect(await t.fireKey("acme", "push", "sha256:new", "third", t0 + 3 * DAY, DAY)).toBe("third");
  });
});
