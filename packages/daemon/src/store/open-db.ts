import { PostgresDb, type PostgresOptions } from "./postgres-db.js";
import { SqliteDb, type SqliteOptions } from "./sqlite-db.js";

export type OpenDbOptions = SqliteOptions & PostgresOptions;

/** The adapter for a database URL, with the schema migrated to the newest version. */
export type OpenedDb = SqliteDb | PostgresDb;

/**
 * Opens `sqlite:PATH` (SQLite, WAL) or `postgres://` / `postgresql://`
 * (PostgreSQL), migrates it, and hands it out ready. Errors name the database,
 * never its password.
 */
export async function openDb(databaseUrl: string, options: OpenDbOptions = {}): Promise<OpenedDb> {
  if (databaseUrl.startsWith("sqlite:")) {
    const path = databaseUrl.slice("sqlite:".length);
    if (path === "") throw new Error('The database URL "sqlite:" names no file: write sqlite:PATH.');
    return new SqliteDb(path, options);
  }
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    let db: PostgresDb | undefined;
    try {
      db = new PostgresDb(databaseUrl, options);
      await db.migrate();
      return db;
    } catch (err) {
      await db?.close().catch(() => undefined);
      const why = err instanceof Error ? err.message : String(err);
      throw new Error(`Cannot open the PostgreSQL database ${redactDatabaseUrl(databaseUrl)}: ${why}`, { cause: err });
    }
  }
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(databaseUrl)?.[1];
  throw new Error(
    `${scheme ? `A ${scheme}: database URL is not supported` : `"${redactDatabaseUrl(databaseUrl)}" is not a database URL`}: use sqlite:PATH or postgres://USER@HOST:PORT/DB.`,
  );
}

/** The URL with its password (and any password= parameter) replaced by ***, for messages and logs. */
export function redactDatabaseUrl(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    if (url.password) url.password = "***";
    for (const key of [...url.searchParams.keys()]) if (/pass/i.test(key)) url.searchParams.set(key, "***");
    return url.toString();
  } catch {
    return databaseUrl.replace(/\/\/([^/@]*):[^/@]*@/, "//$1:***@");
  }
}
