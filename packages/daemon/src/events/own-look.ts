import type { Db } from "../store/db.js";

/**
 * How often a follower reads the record on its own, with nothing to wake it:
 * on PostgreSQL, where another node of a cluster may write events and its
 * word of them can be lost (it died between its commit and its notice), or
 * an event can wait for an older transaction. On SQLite one process writes
 * everything and wakes its followers itself: never (undefined).
 */
export function ownLookMs(db: Pick<Db, "dialect">): number | undefined {
  return db.dialect.ownLookMs;
}
