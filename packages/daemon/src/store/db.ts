/**
 * The narrow SQL seam under the Store. Queries are written once, with `?`
 * placeholders and SQL that SQLite and PostgreSQL both accept; each adapter
 * runs them (sqlite-db.ts, postgres-db.ts; open-db.ts picks one by URL).
 *
 * What the adapters promise alike: rows hold SqlValues (PostgreSQL's BIGINT,
 * COUNT(*), SUM() and booleans come back as numbers, as in SQLite); `run`
 * reports the rows an INSERT/UPDATE/DELETE changed; `transaction` commits
 * everything `fn` wrote or, if `fn` throws, nothing.
 *
 * Where they differ (the pieces of SQL that cannot be written once are on
 * `dialect`), and queries must work with both:
 * - SQLite runs one transaction at a time; PostgreSQL runs them concurrently
 *   (READ COMMITTED), so allocating or claiming must lock or check `changes`.
 * - After a statement fails inside a transaction, PostgreSQL refuses the
 *   transaction's later statements: let the error end the transaction
 *   (catching it and carrying on works on SQLite only).
 * - PostgreSQL folds unquoted names to lower case: write column aliases in
 *   snake_case (`AS turn_count`), never camelCase.
 */
import type { SqlDialect } from "./dialect.js";

export type SqlValue = string | number | bigint | null;
export type Row = Record<string, SqlValue>;

export interface Tx {
  run(sql: string, params?: readonly SqlValue[]): Promise<{ changes: number }>;
  get<R extends Row = Row>(sql: string, params?: readonly SqlValue[]): Promise<R | undefined>;
  all<R extends Row = Row>(sql: string, params?: readonly SqlValue[]): Promise<R[]>;
}

/** Reads outside a transaction. */
export type Reads = Pick<Tx, "get" | "all">;

/** What a database adapter has done, for benchmarks: statements sent and transactions committed. */
export interface DbStats {
  statements: number;
  commits: number;
}

export interface Db extends Tx {
  /** Everything that differs between SQLite and PostgreSQL (dialect.ts). */
  readonly dialect: SqlDialect;
  readonly stats: DbStats;
  /**
   * Reads that see committed rows only. On SQLite a plain read shares the
   * one writing connection, so it runs inside whatever transaction is open
   * at that moment (another flow's, paused at an await) and can see rows
   * that still roll back; followers of the record read through this.
   */
  readonly committed: Pick<Tx, "get" | "all">;
  /**
   * Plain reads done for `org`'s work (a turn's, a request's): on PostgreSQL
   * they wait for a pooled connection in the orgs' rotation as that org's,
   * instead of in the one queue plain reads share; on SQLite, where reads
   * run at once, the same as the database's own.
   */
  readsFor(org: string): Reads;
  /**
   * Runs `fn` in one transaction: everything it writes commits together or
   * not at all. `org`, whose work it is: on PostgreSQL, orgs waiting for a
   * pooled connection get them in turn (fair-checkout.ts); SQLite commits
   * the waiting transactions together (group commit), whoever's they are.
   */
  transaction<T>(fn: (tx: Tx) => Promise<T>, org?: string): Promise<T>;
  /**
   * Runs `fn` while holding the lock `name`: one holder at a time among every
   * process that shares this database (on SQLite, which one daemon owns, among
   * the callers of this process). For work of several transactions that two
   * nodes must not do at once, such as registering the agents of agents/.
   * The lock goes with the process should it die, and on PostgreSQL with a
   * process frozen past the idle-in-transaction timeout (see PostgresDb).
   */
  exclusive<T>(name: string, fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
