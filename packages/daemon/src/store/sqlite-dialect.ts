import type { Row } from "./db.js";
import type { SqlDialect } from "./dialect.js";
import { toEvent, type EventRow } from "./events.js";

/** SQLite: one daemon owns the file and runs one writer at a time; the feed's cursor is the events' rowid. */
export const sqliteDialect: SqlDialect = {
  name: "sqlite",
  statement: (sql) => sql,
  concurrentWriters: false,
  shared: false,
  forUpdate: "",
  skipLocked: "",
  caseInsensitiveLike: "LIKE",
  nowMs: "CAST(unixepoch('subsec') * 1000 AS INTEGER)",
  // One process writes everything and wakes its followers itself.
  ownLookMs: undefined,
  feed: {
    start: "0",
    isCursor: (cursor) => /^\d+$/.test(cursor),
    async read(db, org, after, limit, where) {
      const position = Number.parseInt(after || "0", 10) || 0;
      // Committed rows only: a row of a transaction still open could roll back, and its rowid be used again.
      const rows = await db.committed.all<EventRow & Row & { gseq: number }>(
        `SELECT e.rowid AS gseq, e.* FROM events e WHERE e.org = ? AND e.rowid > ?${where.sql} ORDER BY e.rowid LIMIT ?`,
        [org, position, ...where.params, limit],
      );
      const events = rows.map((r) => ({ ...toEvent(r), cursor: String(r.gseq) }));
      return { events, cursor: events.at(-1)?.cursor ?? (after || "0") };
    },
    async end(db, org) {
      const row = await db.committed.get<{ gseq: number | null }>("SELECT MAX(rowid) AS gseq FROM events WHERE org = ?", [org]);
      return String(row?.gseq ?? 0);
    },
  },
};
