import type { Row } from "./db.js";
import type { SqlDialect } from "./dialect.js";
import type { FeedPage } from "./event-feed.js";
import { toEvent, type EventRow } from "./events.js";
import { toPostgresPlaceholders } from "./postgres-placeholders.js";

/**
 * PostgreSQL: transactions run at once (READ COMMITTED) and a cluster's nodes
 * share the database. Event positions are handed out before commit, so the
 * feed orders by the writing transaction's ID and passes only events whose
 * transactions, and every older one, have finished.
 */
export const postgresDialect: SqlDialect = {
  name: "postgres",
  statement: toPostgresPlaceholders,
  concurrentWriters: true,
  shared: true,
  forUpdate: " FOR UPDATE",
  skipLocked: " FOR UPDATE SKIP LOCKED",
  caseInsensitiveLike: "ILIKE",
  nowMs: "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT",
  // Another node's word of its events can be lost (it died between its commit and its notice), or an event wait for an older transaction.
  ownLookMs: 1000,
  feed: {
    start: "0.0",
    isCursor: (cursor) => /^\d+\.\d+$/.test(cursor),
    async read(db, org, after, limit, where) {
      const m = /^(\d+)\.(\d+)$/.exec(after);
      const [txid, gseq] = m ? [m[1]!, Number(m[2])] : ["0", 0];
      const rows = await db.all<EventRow & Row & { gseq: number; txid: string; xmin: string }>(
        `SELECT e.*, e.txid::text AS txid, pg_snapshot_xmin(pg_current_snapshot())::text AS xmin FROM events e WHERE e.org = ? AND (e.txid, e.gseq) > (?::xid8, ?)${where.sql} ORDER BY e.txid, e.gseq LIMIT ?`,
        [org, txid, gseq, ...where.params, limit],
      );
      // Rows sort by transaction ID, so those held back come after every passed one.
      const passed = rows.filter((r) => BigInt(r.txid) < BigInt(r.xmin));
      const events = passed.map((r) => ({ ...toEvent(r), cursor: `${r.txid}.${r.gseq}` }));
      const page: FeedPage = { events, cursor: events.at(-1)?.cursor ?? after };
      if (passed.length < rows.length) page.heldBy = rows[0]!.xmin;
      return page;
    },
    async end(db, org) {
      const row = await db.get<{ txid: string | null; gseq: number | null }>(
        "SELECT e.txid::text AS txid, e.gseq FROM events e WHERE e.org = ? AND e.txid < pg_snapshot_xmin(pg_current_snapshot()) ORDER BY e.txid DESC, e.gseq DESC LIMIT 1",
        [org],
      );
      return row?.txid ? `${row.txid}.${row.gseq}` : "0.0";
    },
  },
};
