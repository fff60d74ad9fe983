/**
 * A second connection to a test's database, of either dialect: it sees only
 * what was committed, and lets a test read or damage saved state the way
 * another process would (a crash left it so, a person edited it).
 */
import Database from "better-sqlite3";
import pg from "pg";

export interface SideConnection {
  all<R>(sql: string, params?: unknown[]): Promise<R[]>;
  run(sql: string, params?: unknown[]): Promise<void>;
  close(): Promise<void>;
}

/** `url` as config.yaml takes it (`sqlite:PATH` or `postgres://...`); SQL uses `?` placeholders. */
export async function sideConnection(url: string): Promise<SideConnection> {
  if (url.startsWith("sqlite:")) {
    const db = new Database(url.slice("sqlite:".length));
    return {
      all: <R>(sql: string, params: unknown[] = []) => Promise.resolve(db.prepare(sql).all(...params) as R[]),
      run: (sql: string, params: unknown[] = []) => {
        db.prepare(sql).run(...params);
        return Promise.resolve();
      },
      close: () => Promise.resolve(void db.close()),
    };
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const text = (sql: string) => {
    let n = 0;
    return sql.replace(/\?/g, () => `$${++n}`);
  };
  return {
    all: async <R>(sql: string, params: unknown[] = []) => (await client.query(text(sql), params)).rows as R[],
    run: async (sql: string, params: unknown[] = []) => void (await client.query(text(sql), params)),
    close: () => client.end(),
  };
}

/** Runs `fn` with a side connection and closes it. */
export async function withSideConnection<T>(url: string, fn: (c: SideConnection) => Promise<T>): Promise<T> {
  const c = await sideConnection(url);
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}
