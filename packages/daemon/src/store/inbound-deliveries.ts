import type { Db } from "./db.js";

/**
 * Inbound webhook deliveries seen, by a signed delivery ID
 * (012_inbound_deliveries.sql): each maps to the fire key its first arrival
 * got, until it expires. A delivery is recorded in one statement, so of two
 * arrivals at once (on any nodes) both get the same key.
 */
export class InboundDeliveriesTable {
  constructor(private readonly db: Db) {}

  /**
   * The fire key of `delivery` to webhook `hook` of `org`: `fresh` when the
   * delivery is new (or its record expired), else the key recorded at its
   * first arrival. The record lasts `ttlMs` from that arrival.
   */
  async fireKey(org: string, hook: string, delivery: string, fresh: string, nowMs: number, ttlMs: number): Promise<string> {
    return this.db.transaction(async (tx) => {
      await tx.run(
        `INSERT INTO inbound_deliveries (org, hook, delivery, fire_key, expires_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (org, hook, delivery) DO UPDATE SET fire_key = excluded.fire_key, expires_at = excluded.expires_at
         WHERE inbound_deliveries.expires_at <= ?`,
        [org, hook, delivery, fresh, nowMs + ttlMs, nowMs],
      );
      const row = await tx.get<{ fire_key: string }>(
        "SELECT fire_key FROM inbound_deliveries WHERE org = ? AND hook = ? AND delivery = ?",
        [org, hook, delivery],
      );
      return row!.fire_key;
    });
  }

  /** Deletes the records that have expired; how many. */
  async sweep(nowMs: number): Promise<number> {
    return (await this.db.transaction((tx) => tx.run("DELETE FROM inbound_deliveries WHERE expires_at <= ?", [nowMs]))).changes;
  }
}
