import Database from "better-sqlite3";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Db, Row, SqlValue, Tx } from "./db.js";

export interface SqliteOptions {
  /** `FULL` fsyncs every commit; `NORMAL` (default) survives a killed process, not a power cut. */
  synchronous?: "NORMAL" | "FULL";
}

export const SCHEMA_VERSION = 1;

/**
 * SQLite adapter (WAL). better-sqlite3 is synchronous, so a transaction that
 * awaits would let other callers interleave on the one connection: a promise
 * chain serialises transactions instead.
 */
export class SqliteDb implements Db {
  readonly dialect = "sqlite" as const;
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(path: string, options: SqliteOptions = {}) {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma(`synchronous = ${process.env.WX_SYNC ?? options.synchronous ?? "NORMAL"}`);
    if (process.env.WX_LOCK) this.db.pragma(`locking_mode = ${process.env.WX_LOCK}`);
    if (process.env.WX_CKPT) this.db.pragma(`wal_autocheckpoint = ${process.env.WX_CKPT}`);
    this.db.pragma("busy_timeout = 5000");
    this.db.pragma("foreign_keys = OFF");
    migrate(this.db);
  }

  private statement(sql: string): Database.Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  private readonly direct: Tx = {
    run: (sql, params = []) => Promise.resolve({ changes: this.statement(sql).run(...params).changes }),
    get: <R extends Row>(sql: string, params: readonly SqlValue[] = []) =>
      Promise.resolve(this.statement(sql).get(...params) as R | undefined),
    all: <R extends Row>(sql: string, params: readonly SqlValue[] = []) =>
      Promise.resolve(this.statement(sql).all(...params) as R[]),
  };

  run(sql: string, params?: readonly SqlValue[]) {
    return this.direct.run(sql, params);
  }
  get<R extends Row = Row>(sql: string, params?: readonly SqlValue[]) {
    return this.direct.get<R>(sql, params);
  }
  all<R extends Row = Row>(sql: string, params?: readonly SqlValue[]) {
    return this.direct.all<R>(sql, params);
  }

  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    const result = this.queue.then(async () => {
      this.db.exec("BEGIN IMMEDIATE");
      try {
        const value = await fn(this.direct);
        this.db.exec("COMMIT");
        return value;
      } catch (err) {
        if (this.db.inTransaction) this.db.exec("ROLLBACK");
        throw err;
      }
    });
    this.queue = result.catch(() => undefined);
    return result;
  }

  close(): Promise<void> {
    return this.queue.then(() => {
      if (this.db.open) this.db.close();
    });
  }
}

function migrationsDir(): string {
  // dist/store/ and src/store/ both sit next to migrations/ (the build copies them).
  return join(dirname(fileURLToPath(import.meta.url)), "migrations");
}

export function readMigrations(): { version: number; sql: string }[] {
  return readdirSync(migrationsDir())
    .filter((f) => /^\d+_.*\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number.parseInt(f, 10), sql: readFileSync(join(migrationsDir(), f), "utf8") }));
}

function migrate(db: Database.Database): void {
  db.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  const row = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as { value: string } | undefined;
  const current = row ? Number(row.value) : 0;
  if (current > SCHEMA_VERSION) {
    throw new Error(
      `The database was written by a newer Wardrik (schema version ${current}; this one knows up to ${SCHEMA_VERSION}). Upgrade Wardrik.`,
    );
  }
  for (const m of readMigrations()) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.prepare("INSERT INTO meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(
        String(m.version),
      );
    })();
  }
}
