import type { StoredEvent } from "../events/event-bus.js";
import type { Db, Row, SqlValue } from "./db.js";
import { toEvent, typeClause, type EventFilter, type EventRow } from "./events.js";

export interface FeedFilter extends EventFilter {
  /** Only these agents' events. */
  agents?: readonly string[] | undefined;
}

export interface FeedPage {
  events: (StoredEvent & { cursor: string })[];
  /** Pass as `after` for the next page; unchanged when nothing new was committed. */
  cursor: string;
  /**
   * PostgreSQL: events after this page are committed but wait for older
   * transactions to end; this names the oldest of those (its ID). Nothing
   * may announce its end (a transaction that writes no event, or one on
   * another database of the server), so a follower reads again soon.
   */
  heldBy?: string;
}

/**
 * The org-wide feed: every agent's events in one stream, with an opaque
 * cursor that never skips an event. On SQLite one writer commits in rowid
 * order. On PostgreSQL positions are handed out before commit, so commit
 * order can differ from position order: the feed orders by the writing
 * transaction's ID and passes only events whose transactions, and every
 * older one, have finished. The same statement sees the committed events it
 * holds back (they sort after every passed one), and says so.
 */
export async function readFeed(db: Db, org: string, after: string, limit: number, filter: FeedFilter = {}): Promise<FeedPage> {
  const types = typeClause(filter.types, "e.type");
  const agents = agentClause(filter.agents);
  if (db.dialect === "postgres") {
    const [txid, gseq] = parsePgCursor(after);
    const rows = await db.all<EventRow & Row & { gseq: number; txid: string; xmin: string }>(
      `SELECT e.*, e.txid::text AS txid, pg_snapshot_xmin(pg_current_snapshot())::text AS xmin FROM events e WHERE e.org = ? AND (e.txid, e.gseq) > (?::xid8, ?)${types.sql}${agents.sql} ORDER BY e.txid, e.gseq LIMIT ?`,
      [org, txid, gseq, ...types.params, ...agents.params, limit],
    );
    // Rows sort by transaction ID, so those held back come after every passed one.
    const passed = rows.filter((r) => BigInt(r.txid) < BigInt(r.xmin));
    const events = passed.map((r) => ({ ...toEvent(r), cursor: `${r.txid}.${r.gseq}` }));
    const page: FeedPage = { events, cursor: events.at(-1)?.cursor ?? after };
    if (passed.length < rows.length) page.heldBy = rows[0]!.xmin;
    return page;
  }
  const position = Number.parseInt(after || "0", 10) || 0;
  // Committed rows only: a row of a transaction still open could roll back, and its rowid be used again.
  const rows = await db.committed.all<EventRow & Row & { gseq: number }>(
    `SELECT e.rowid AS gseq, e.* FROM events e WHERE e.org = ? AND e.rowid > ?${types.sql}${agents.sql} ORDER BY e.rowid LIMIT ?`,
    [org, position, ...types.params, ...agents.params, limit],
  );
  const events = rows.map((r) => ({ ...toEvent(r), cursor: String(r.gseq) }));
  return { events, cursor: events.at(-1)?.cursor ?? (after || "0") };
}

/** The cursor of the feed's current end: following from it shows only what comes next. */
export async function feedEnd(db: Db, org: string): Promise<string> {
  if (db.dialect === "postgres") {
    const row = await db.get<{ txid: string | null; gseq: number | null }>(
      "SELECT e.txid::text AS txid, e.gseq FROM events e WHERE e.org = ? AND e.txid < pg_snapshot_xmin(pg_current_snapshot()) ORDER BY e.txid DESC, e.gseq DESC LIMIT 1",
      [org],
    );
    return row?.txid ? `${row.txid}.${row.gseq}` : "0.0";
  }
  const row = await db.committed.get<{ gseq: number | null }>("SELECT MAX(rowid) AS gseq FROM events WHERE org = ?", [org]);
  return String(row?.gseq ?? 0);
}

function parsePgCursor(after: string): [string, number] {
  const m = /^(\d+)\.(\d+)$/.exec(after);
  return m ? [m[1]!, Number(m[2])] : ["0", 0];
}

function agentClause(agents: readonly string[] | undefined): { sql: string; params: SqlValue[] } {
  if (!agents || agents.length === 0) return { sql: "", params: [] };
  return { sql: ` AND e.agent_id IN (${agents.map(() => "?").join(", ")})`, params: [...agents] };
}

/** Whether a feed cursor has a form this database reads. */
export function isFeedCursor(db: Db, cursor: string): boolean {
  return db.dialect === "postgres" ? /^\d+\.\d+$/.test(cursor) : /^\d+$/.test(cursor);
}
