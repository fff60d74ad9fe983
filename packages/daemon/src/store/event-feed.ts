import type { StoredEvent } from "../events/event-bus.js";
import type { Db, SqlValue } from "./db.js";
import { typeClause, type EventFilter } from "./events.js";

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
   * transactions of the same database to end; this names the oldest of
   * those (its ID). Nothing may announce its end (a transaction that writes
   * no event), so a follower reads again soon.
   */
  heldBy?: string;
}

/**
 * The org-wide feed: every agent's events in one stream, with an opaque
 * cursor that never skips an event. On SQLite one writer commits in rowid
 * order. On PostgreSQL positions are handed out before commit, so commit
 * order can differ from position order: the feed orders by the writing
 * transaction's ID and passes only events whose transactions, and every
 * older one of the same database, have finished. The same statement sees the committed events it
 * holds back (they sort after every passed one), and says so.
 */
export function readFeed(db: Db, org: string, after: string, limit: number, filter: FeedFilter = {}): Promise<FeedPage> {
  const types = typeClause(filter.types, "e.type");
  const agents = agentClause(filter.agents);
  return db.dialect.feed.read(db, org, after, limit, { sql: types.sql + agents.sql, params: [...types.params, ...agents.params] });
}

/** The cursor of the feed's current end: following from it shows only what comes next. */
export function feedEnd(db: Db, org: string): Promise<string> {
  return db.dialect.feed.end(db, org);
}

/** The cursor before every event, in this database's form. */
export function feedStart(db: Db): string {
  return db.dialect.feed.start;
}

function agentClause(agents: readonly string[] | undefined): { sql: string; params: SqlValue[] } {
  if (!agents || agents.length === 0) return { sql: "", params: [] };
  return { sql: ` AND e.agent_id IN (${agents.map(() => "?").join(", ")})`, params: [...agents] };
}

/** Whether a feed cursor has a form this database reads. */
export function isFeedCursor(db: Db, cursor: string): boolean {
  return db.dialect.feed.isCursor(cursor);
}
