/** Idempotency keys on the run's dialect (SQLite, PostgreSQL): claim once, replay the answer, expire after 24 hours. */
import { afterEach, describe, expect, it } from "vitest";
import type { Db } from "../../src/store/db.js";
import { IDEMPOTENCY_TTL_MS, IdempotencyKeys } from "../../src/store/idempotency-keys.js";
import { openTestDb, TEST_DIALECT } from "../helpers/test-database.js";

const open: Db[] = [];
afterEach(async () => {
  for (const db of open.splice(0)) await db.close();
});
async function keys(): Promise<IdempotencyKeys> {
  const { db } = await openTestDb();
  open.push(db);
  return new IdempotencyKeys(db);
}

const t0 = new Date("2026-01-01T00:00:00Z");
const answer = { status: 202, body: '{"message":"msg_1"}', contentType: "application/json" };

describe(`IdempotencyKeys on ${TEST_DIALECT}`, () => {
  it("lets one of many concurrent claims of a key win; the others see it pending", async () => {
    const k = await keys();
    const results = await Promise.all(Array.from({ length: 10 }, () => k.claim("org POST /x", "key-1", "fp", "me", t0)));
    expect(results.filter((r) => r.claimed)).toHaveLength(1);
    for (const r of results.filter((x) => !x.claimed))
      expect(r).toEqual({ claimed: false, record: { state: "pending", fingerprint: "fp", owner: "me" } });
  });

  it("keeps the answer of a completed key, per scope", async () => {
    const k = await keys();
    expect(await k.claim("a", "key", "fp", "me", t0)).toEqual({ claimed: true });
    await k.complete("a", "key", "fp", "me", answer);
    expect(await k.claim("a", "key", "fp", "me", t0)).toEqual({
      claimed: false,
      record: { state: "done", fingerprint: "fp", owner: "me", answer },
    });
    // The same key in another scope (org or route) is another key.
    expect(await k.claim("b", "key", "fp", "me", t0)).toEqual({ claimed: true });
  });

  it("a released key can be claimed again", async () => {
    const k = await keys();
    await k.claim("a", "key", "fp", "me", t0);
    await k.release("a", "key", "fp", "me");
    expect(await k.claim("a", "key", "fp2", "me", t0)).toEqual({ claimed: true });
  });

  it("keeps keys for 24 hours; after that the key counts as new and purge deletes it", async () => {
    const k = await keys();
    await k.claim("a", "key", "fp", "me", t0);
    await k.complete("a", "key", "fp", "me", answer);
    const almost = new Date(t0.getTime() + IDEMPOTENCY_TTL_MS - 1000);
    expect((await k.claim("a", "key", "fp", "me", almost)).claimed).toBe(false);
    expect(await k.purge(almost)).toBe(0);
    const later = new Date(t0.getTime() + IDEMPOTENCY_TTL_MS + 1000);
    expect(await k.claim("a", "key", "other", "me", later)).toEqual({ claimed: true });
    await k.claim("b", "old", "fp", "me", t0);
    expect(await k.purge(later)).toBe(1);
  });

  it("a pending key taken over belongs to the new owner: the old one can neither complete nor release it", async () => {
    const k = await keys();
    await k.claim("a", "key", "fp", "dead", t0);
    const pending = { state: "pending", fingerprint: "fp", owner: "dead" } as const;
    const takers = await Promise.all([k.takeOver("a", "key", pending, "one"), k.takeOver("a", "key", pending, "two")]);
    expect(takers.filter(Boolean)).toHaveLength(1);
    const winner = takers[0] ? "one" : "two";
    expect(await k.complete("a", "key", "fp", "dead", answer)).toBe(false);
    await k.release("a", "key", "fp", "dead");
    expect(await k.complete("a", "key", "fp", winner, answer)).toBe(true);
    expect(await k.claim("a", "key", "fp", "me", t0)).toEqual({
      claimed: false,
      record: { state: "done", fingerprint: "fp", owner: winner, answer },
    });
  });
});
