import type { Row } from "./db.js";
import type { SqlDialect } from "./dialect.js";
import type { FeedPage } from "./event-feed.js";
import { toEvent, type EventRow } from "./events.js";
import { toPostgresPlaceholders } from "./postgres-placeholders.js";

/**
 * The ID before which every transaction of this database that was running
 * when the statement's snapshot was taken has ended: the oldest of them, or
 * the snapshot's end when none is. Transaction IDs are shared by every
 * database of the server, but a transaction of another database cannot write
 * this one's events, so it holds nothing back: a long transaction of another
 * application on the same server must not stall the feed. A running ID that
 * pg_stat_activity no longer shows (its transaction ended after the snapshot)
 * counts as this database's: the next read passes what it held.
 */
const HELD_FROM = `COALESCE((SELECT min(x) FROM pg_snapshot_xip(pg_current_snapshot()) x WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.backend_xid = x::xid AND a.datid <> (SELECT oid FROM pg_database WHERE datname = current_database()))), pg_snapshot_xmax(pg_current_snapshot()))`;

/**
 * PostgreSQL: transactions run at once (READ COMMITTED) and a cluster's nodes
 * share the database. Event positions are handed out before commit, so the
 * feed orders by the writing transaction's ID and passes only events whose
 * transactions, and every older one of this database, have finished.
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
      const rows = await db.all<EventRow & Row & { gseq: number; txid: string; held_from: string }>(
        `SELECT e.*, e.txid::text AS txid, ${HELD_FROM}::text AS held_from FROM events e WHERE e.org = ? AND (e.txid, e.gseq) > (?::xid8, ?)${where.sql} ORDER BY e.txid, e.gseq LIMIT ?`,
        [org, txid, gseq, ...where.params, limit],
      );
      // Rows sort by transaction ID, so those held back come after every passed one.
      const passed = rows.filter((r) => BigInt(r.txid) < BigInt(r.held_from));
      const events = passed.map((r) => ({ ...toEvent(r), cursor: `${r.txid}.${r.gseq}` }));
      const page: FeedPage = { events, cursor: events.at(-1)?.cursor ?? after };
      if (passed.length < rows.length) page.heldBy = rows[0]!.held_from;
      return page;
    },
    async end(db, org) {
      const row = await db.get<{ txid: string | null; gseq: number | null }>(
        `SELECT e.txid::text AS txid, e.gseq FROM events e WHERE e.org = ? AND e.txid < ${HELD_FROM} ORDER BY e.txid DESC, e.gseq DESC LIMIT 1`,
        [org],
      );
      return row?.txid ? `${row.txid}.${row.gseq}` : "0.0";
    },
  },
};
