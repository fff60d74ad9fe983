/**
 * The database a test runs on. `WARDRIK_TEST_DB` picks the dialect: `sqlite`
 * (the default, and the `sqlite` vitest project) or `postgres` (the
 * `postgres` project, whose files are listed in vitest.config.ts's
 * POSTGRES_TEST_FILES; its run-wide server comes from postgres-global-setup.ts).
 *
 * Every database is fresh: a temp SQLite file, or `CREATE DATABASE t_<random>`
 * on the run's server. It is deleted after the test when given the test's
 * context as `scope`, else after the file.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { inject } from "vitest";
import { openDb, type OpenDbOptions, type OpenedDb } from "../../src/store/open-db.js";
import { afterThisFile } from "./file-cleanups.js";

export type TestDialect = "sqlite" | "postgres";

/** The dialect of this test run, from WARDRIK_TEST_DB. */
export const TEST_DIALECT: TestDialect = dialectFromEnv(process.env.WARDRIK_TEST_DB);

export interface TestDatabase {
  dialect: TestDialect;
  /** What config.yaml's `database:` takes: `sqlite:/tmp/.../wardrik.db` or `postgres://...@127.0.0.1:PORT/t_...`. */
  url: string;
  /** Deletes the database now (it is deleted after the test or file anyway). */
  drop(): Promise<void>;
}

export interface TestDatabaseOptions {
  /**
   * Tie the database to this directory: SQLite puts its file there
   * (`wardrik.db`), PostgreSQL notes the database's URL there, and a second
   * call with the same directory gets the same database (a restart).
   */
  dir?: string;
  /** The test's context: delete the database after this test instead of after the file. */
  scope?: { onTestFinished(fn: () => Promise<void> | void): void };
}

/** The file name under `dir` that remembers which PostgreSQL database belongs to it. */
const URL_NOTE = "test-database-url";

/** A fresh, empty database of this run's dialect (not yet migrated: `openDb` does that). */
export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  return createDatabase(options, false);
}

/**
 * A fresh database with every migration applied, for a daemon to start on: on
 * PostgreSQL a copy of the run's migrated template (CREATE DATABASE ...
 * TEMPLATE), which spares each spawned daemon's start the migrations (about
 * 0.3 s of wall time and the server's CPU each, on a quiet machine; the
 * suite starts hundreds); on SQLite the same as createTestDatabase (the
 * daemon migrates its file in about 0.1 s). A migration inserts no rows, so a
 * copy equals a database the daemon would have migrated. Starts on an empty
 * database stay tested where they matter (cluster/cluster-start, store/migrate).
 */
export async function createMigratedTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  return createDatabase(options, true);
}

/** `migrated`: on PostgreSQL, a copy of the run's migrated template instead of an empty database (openDb then has nothing to apply). */
async function createDatabase(options: TestDatabaseOptions, migrated: boolean): Promise<TestDatabase> {
  const database = TEST_DIALECT === "postgres" ? await createPostgres(options.dir, migrated) : createSqlite(options.dir);
  if (!database.fresh) return database;
  if (options.scope) options.scope.onTestFinished(() => database.drop());
  else afterThisFile(() => database.drop(), "databases");
  return database;
}

/** A fresh database of this run's dialect, opened and migrated. Close `db` yourself; the database is deleted later. */
export async function openTestDb(options: TestDatabaseOptions & OpenDbOptions = {}): Promise<{ db: OpenedDb; database: TestDatabase }> {
  const database = await createDatabase(options, true);
  return { db: await openDb(database.url, options), database };
}

/**
 * Databases for the many short histories of one test (a property test's
 * runs): `next(dir)` ties an empty, migrated database to `dir`, for a harness
 * or daemon made on that directory. On PostgreSQL that is one database for the
 * whole test, emptied between histories by a TRUNCATE of every table but the
 * migrations' bookkeeping, sent on a connection kept for the purpose: a CREATE
 * DATABASE from the template and its DROP cost a history about half a second
 * of a busy server, the TRUNCATE under a tenth. On SQLite it is a new file in
 * `dir` (creating and migrating one costs less than emptying one). Whatever
 * held the previous history's database must have closed it.
 */
export function reusedTestDatabases(): { next(dir: string): Promise<void> } {
  let url: string | undefined;
  let emptier: Promise<() => Promise<unknown>> | undefined;
  return {
    async next(dir) {
      if (TEST_DIALECT === "sqlite" || url === undefined) {
        url = (await createDatabase({ dir }, true)).url;
        return;
      }
      emptier ??= postgresEmptier(url);
      const empty = await emptier;
      await empty();
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, URL_NOTE), url);
    },
  };
}

/** Empties the database at `url` when called: every row of every table gone, the migrations' bookkeeping kept (what a copy of the migrated template holds). */
async function postgresEmptier(url: string): Promise<() => Promise<unknown>> {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => undefined);
  await client.connect();
  // Ended before the database is dropped.
  afterThisFile(() => client.end(), "processes");
  const { rows } = await client.query<{ name: string }>(
    "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations'",
  );
  const truncate = `TRUNCATE ${rows.map((r) => pg.escapeIdentifier(r.name)).join(", ")} RESTART IDENTITY`;
  return () => client.query(truncate);
}

/** A database on this run's PostgreSQL server, by name (for the admin work tests themselves do). */
export function postgresUrl(database = "postgres"): string {
  const server = inject("postgresUrl");
  if (!server)
    throw new Error(
      "WARDRIK_TEST_DB=postgres, but this run started no PostgreSQL server: run the file in the `postgres` vitest project (add it to POSTGRES_TEST_FILES in vitest.config.ts).",
    );
  const url = new URL(server);
  url.pathname = `/${database}`;
  return url.toString();
}

function createSqlite(dir: string | undefined): TestDatabase & { fresh: boolean } {
  const own = dir === undefined;
  const home = dir ?? mkdtempSync(join(tmpdir(), "wardrik-db-"));
  const path = join(home, "wardrik.db");
  return {
    dialect: "sqlite",
    url: `sqlite:${path}`,
    fresh: !existsSync(path),
    // A directory the caller gave is the caller's to delete.
    drop: async () => void (own ? rmSync(home, { recursive: true, force: true }) : undefined),
  };
}

async function createPostgres(dir: string | undefined, migrated: boolean): Promise<TestDatabase & { fresh: boolean }> {
  const note = dir === undefined ? undefined : join(dir, URL_NOTE);
  if (note && existsSync(note)) {
    const url = readFileSync(note, "utf8").trim();
    return { dialect: "postgres", url, fresh: false, drop: () => dropPostgres(new URL(url).pathname.slice(1)) };
  }
  const name = `t_${randomBytes(6).toString("hex")}`;
  const template = migrated ? ` TEMPLATE ${pg.escapeIdentifier(inject("postgresTemplate"))}` : "";
  await admin((client) => client.query(`CREATE DATABASE ${name}${template}`));
  const url = postgresUrl(name);
  if (dir !== undefined && note !== undefined) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(note, url);
  }
  let dropped = false;
  return {
    dialect: "postgres",
    url,
    fresh: true,
    drop: async () => {
      if (dropped) return;
      dropped = true;
      await dropPostgres(name);
    },
  };
}

async function dropPostgres(name: string): Promise<void> {
  // FORCE ends sessions a test left open (a killed daemon's, an unclosed pool).
  await admin((client) => client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`));
}

async function admin(fn: (client: pg.Client) => Promise<unknown>): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl() });
  client.on("error", () => undefined);
  await client.connect();
  try {
    await fn(client);
  } finally {
    await client.end();
  }
}

function dialectFromEnv(value: string | undefined): TestDialect {
  if (value === undefined || value === "" || value === "sqlite") return "sqlite";
  if (value === "postgres") return "postgres";
  throw new Error(`WARDRIK_TEST_DB must be sqlite or postgres, not ${JSON.stringify(value)}.`);
}
