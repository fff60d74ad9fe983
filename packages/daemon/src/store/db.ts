/**
 * The narrow SQL seam under the Store. Queries are written once, with `?`
 * placeholders and SQL that SQLite and PostgreSQL both accept; each adapter
 * runs them. Transactions are serialised per adapter, so domain operations
 * stay atomic even when many actors run at once.
 */
export type SqlValue = string | number | bigint | null;
export type Row = Record<string, SqlValue>;

export interface Tx {
  run(sql: string, params?: readonly SqlValue[]): Promise<{ changes: number }>;
  get<R extends Row = Row>(sql: string, params?: readonly SqlValue[]): Promise<R | undefined>;
  all<R extends Row = Row>(sql: string, params?: readonly SqlValue[]): Promise<R[]>;
}

/** What a database adapter has done, for benchmarks: statements sent and transactions committed. */
export interface DbStats {
  statements: number;
  commits: number;
}

export interface Db extends Tx {
  readonly dialect: "sqlite" | "postgres";
  readonly stats: DbStats;
  /** Runs `fn` in one transaction: everything it writes commits together or not at all. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
