/**
 * The schema migration runner, for both dialects.
 *
 * Migrations are numbered SQL files, one folder per dialect
 * (`migrations/sqlite/NNN_name.sql`, `migrations/postgres/NNN_name.sql`); the
 * two folders carry the same versions, written in each dialect's SQL. Applied
 * versions are recorded in `schema_migrations`. Never edit a shipped file: add
 * the next number. A migration must not contain BEGIN/COMMIT (the runner wraps
 * each one in its own transaction) nor statements PostgreSQL refuses inside a
 * transaction (CREATE INDEX CONCURRENTLY).
 *
 * Each step is one transaction that first takes a lock, then reads what is
 * applied, then applies the next migration and records it. A second daemon
 * starting at the same moment waits on the lock and then finds the work done,
 * so no migration ever runs twice. The lock is SQLite's write lock (BEGIN
 * IMMEDIATE) or a PostgreSQL transaction-level advisory lock; both end with
 * the transaction, also when the process dies.
 *
 * The SQLite runner is synchronous (better-sqlite3 is), so `new SqliteDb()`
 * hands out a migrated database; the PostgreSQL one is async. They share the
 * file reading, the decision what to apply, and the bookkeeping SQL.
 */
import type Database from "better-sqlite3";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { CODE_DIR } from "../package-dir.js";

export type Dialect = "sqlite" | "postgres";

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export interface MigrationResult {
  /** Versions this run applied, in order (empty when the schema was current). */
  applied: number[];
  /** The schema version after the run. */
  version: number;
}

/** Anything that runs SQL on one PostgreSQL session (a pg Client or PoolClient). */
export interface PgSession {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

const FILE_NAME = /^(\d+)_([a-z0-9_]+)\.sql$/;

/** The advisory lock every PostgreSQL migration step takes: "WARDRIK" in ASCII, fixed so all releases agree. */
export const MIGRATION_LOCK_KEY = 0x5741524452494bn;

const BOOKKEEPING = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at TEXT NOT NULL
)`;

export function migrationsDir(dialect: Dialect): string {
  // src/store/migrations, copied by the build to dist/store/migrations: the bundle (dist/bundle/) reads dist's.
  return join(CODE_DIR, "store", "migrations", dialect);
}

/** The dialect's migrations in version order; a misnamed file or a repeated number is an error. */
export function readMigrations(dialect: Dialect): Migration[] {
  const dir = migrationsDir(dialect);
  const migrations: Migration[] = [];
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith(".sql")) continue;
    const m = FILE_NAME.exec(file);
    if (!m) throw new Error(`${join(dir, file)}: a migration file is named NNN_name.sql (digits, underscore, lowercase name).`);
    const version = Number.parseInt(m[1]!, 10);
    const twin = migrations.find((x) => x.version === version);
    if (twin) throw new Error(`${dir}: two migrations have version ${version} (${twin.name} and ${m[2]}).`);
    migrations.push({ version, name: m[2]!, sql: readFileSync(join(dir, file), "utf8") });
  }
  return migrations.sort((a, b) => a.version - b.version);
}

export function latestVersion(migrations: readonly Migration[]): number {
  return migrations.reduce((max, m) => Math.max(max, m.version), 0);
}

export function newerDatabaseMessage(found: number, known: number): string {
  return `The database was written by a newer Wardrik (schema version ${found}; this one knows up to ${known}). Upgrade Wardrik.`;
}

/** The next migration to apply, or undefined when none is left; refuses a database newer than the code. */
export function nextMigration(known: readonly Migration[], applied: ReadonlySet<number>): Migration | undefined {
  const newest = Math.max(0, ...applied);
  const latest = latestVersion(known);
  if (newest > latest) throw new Error(newerDatabaseMessage(newest, latest));
  return known.find((m) => !applied.has(m.version));
}

function failed(dialect: Dialect, m: Migration, err: unknown): Error {
  const file = `${dialect}/${String(m.version).padStart(3, "0")}_${m.name}.sql`;
  return new Error(`Migration ${file} failed, nothing of it was applied: ${err instanceof Error ? err.message : String(err)}`, {
    cause: err,
  });
}

// ---- SQLite ----

/**
 * How long a SQLite migration step waits for the write lock while another
 * process migrates the same file. One step can take far longer than the
 * connection's busy_timeout (a table rewritten on a big database, or a slow
 * machine), and the waiting process must then find the work done, not fail.
 */
export const SQLITE_LOCK_WAIT_MS = 300_000;

const pauseCell = new Int32Array(new SharedArrayBuffer(4));

/**
 * BEGIN IMMEDIATE, tried again while another connection holds the write lock
 * past the connection's busy_timeout, until `waitMs` have passed. The runner
 * is synchronous, so the pause between tries blocks (Atomics.wait).
 */
function beginImmediate(db: Database.Database, waitMs: number): void {
  const until = Date.now() + waitMs;
  for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
    try {
      db.exec("BEGIN IMMEDIATE");
      return;
    } catch (err) {
      if (!String((err as { code?: unknown }).code).startsWith("SQLITE_BUSY") || Date.now() >= until) throw err;
    }
    Atomics.wait(pauseCell, 0, 0, pause);
  }
}

/** Brings a SQLite database up to the newest migration. Synchronous, like better-sqlite3. */
export function migrateSqlite(
  db: Database.Database,
  known: readonly Migration[] = readMigrations("sqlite"),
  lockWaitMs = SQLITE_LOCK_WAIT_MS,
): MigrationResult {
  const applied: number[] = [];
  let version = 0;
  for (;;) {
    // The write lock, taken before reading: a second process waits here until the first one's step is done.
    beginImmediate(db, lockWaitMs);
    let next: Migration | undefined;
    try {
      const done = sqliteApplied(db, known);
      next = nextMigration(known, done);
      if (next) {
        db.exec(next.sql);
        db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
          next.version,
          next.name,
          new Date().toISOString(),
        );
        done.add(next.version);
      }
      version = Math.max(0, ...done);
      // Releases before schema_migrations read only meta: keep it current so they refuse a newer file.
      db.prepare("INSERT INTO meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(
        String(version),
      );
      db.exec("COMMIT");
    } catch (err) {
      if (db.inTransaction) db.exec("ROLLBACK");
      throw next ? failed("sqlite", next, err) : err;
    }
    if (!next) return { applied, version };
    applied.push(next.version);
  }
}

/**
 * The applied versions. A database from before `schema_migrations` (release
 * 0.1, which recorded only `meta.schema_version`) has every migration up to
 * that version applied: they are recorded as such, never run again.
 */
function sqliteApplied(db: Database.Database, known: readonly Migration[]): Set<number> {
  db.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  db.exec(BOOKKEEPING);
  const done = new Set((db.prepare("SELECT version FROM schema_migrations").all() as { version: number }[]).map((r) => r.version));
  const meta = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as { value: string } | undefined;
  const metaVersion = meta ? Number(meta.value) : 0;
  if (metaVersion > latestVersion(known)) throw new Error(newerDatabaseMessage(metaVersion, latestVersion(known)));
  if (done.size === 0 && metaVersion > 0) {
    const adopt = db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");
    const now = new Date().toISOString();
    for (const m of known) {
      if (m.version > metaVersion) continue;
      adopt.run(m.version, m.name, now);
      done.add(m.version);
    }
  }
  return done;
}

// ---- PostgreSQL ----

/** Brings a PostgreSQL database up to the newest migration, on one session it does not release. */
export async function migratePostgres(
  session: PgSession,
  known: readonly Migration[] = readMigrations("postgres"),
): Promise<MigrationResult> {
  const applied: number[] = [];
  for (;;) {
    await session.query("BEGIN");
    let next: Migration | undefined;
    let version = 0;
    try {
      // Released by COMMIT or ROLLBACK, or by the server when the session dies.
      await session.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
      await session.query(BOOKKEEPING);
      const rows = (await session.query("SELECT version FROM schema_migrations")).rows;
      const done = new Set(rows.map((r) => Number(r.version)));
      next = nextMigration(known, done);
      if (next) {
        // No parameters: the simple protocol, which runs a file of several statements.
        await session.query(next.sql);
        await session.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [
          next.version,
          next.name,
          new Date().toISOString(),
        ]);
        done.add(next.version);
      }
      version = Math.max(0, ...done);
      await session.query("COMMIT");
    } catch (err) {
      await session.query("ROLLBACK").catch(() => undefined);
      throw next ? failed("postgres", next, err) : err;
    }
    if (!next) return { applied, version };
    applied.push(next.version);
  }
}
