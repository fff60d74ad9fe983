import type { Db } from "./db.js";
import type { FeedPage } from "./event-feed.js";
import type { SqlValue } from "./db.js";

/** A WHERE clause's extra text and its parameters. */
export interface SqlClause {
  sql: string;
  params: SqlValue[];
}

/**
 * Everything that differs between SQLite and PostgreSQL, in one object per
 * dialect (sqlite-dialect.ts, postgres-dialect.ts), each database adapter
 * carrying its own as `db.dialect`. The store's queries are written once in
 * SQL both accept; where they cannot be, they take the differing piece from
 * here, never by asking which dialect they run on.
 */
export interface SqlDialect {
  /** The migrations folder, and the name shown to people (`wardrik doctor`, benchmarks). */
  readonly name: "sqlite" | "postgres";
  /** The statement as the driver takes it: the store writes `?` placeholders. */
  statement(sql: string): string;
  /**
   * Whether transactions run at once, so a row read to be changed must be
   * locked (PostgreSQL, READ COMMITTED); SQLite runs one writer at a time.
   */
  readonly concurrentWriters: boolean;
  /** Whether processes other than this daemon use the database (a cluster's nodes); one daemon owns an SQLite file. */
  readonly shared: boolean;
  /** Ends a SELECT whose rows this transaction then changes: locks them where writers run at once. */
  readonly forUpdate: string;
  /** Ends a SELECT that claims rows: skips those another transaction claims meanwhile, where writers run at once. */
  readonly skipLocked: string;
  /** The operator matching text whatever the case of its letters (SQLite's LIKE ignores only ASCII letters' case). */
  readonly caseInsensitiveLike: string;
  /** The database's clock in epoch milliseconds, as an SQL expression. */
  readonly nowMs: string;
  /**
   * How often a follower reads the record on its own, with nothing to wake it: where another node
   * may write events and its word of them can be lost; never (undefined) where one process writes everything.
   */
  readonly ownLookMs: number | undefined;
  /** The event feed in commit order (see event-feed.ts). */
  readonly feed: {
    /** The cursor before every event. */
    readonly start: string;
    isCursor(cursor: string): boolean;
    read(db: Db, org: string, after: string, limit: number, where: SqlClause): Promise<FeedPage>;
    end(db: Db, org: string): Promise<string>;
  };
}
