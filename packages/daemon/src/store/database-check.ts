/**
 * What `wardrik doctor` learns about a project's database without changing
 * it: that it opens (a SQLite file read-only, a PostgreSQL server with a
 * short timeout), and whether this Wardrik can use its schema.
 */
import Database from "better-sqlite3";
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { loadPg } from "./load-pg.js";
import { readMigrations } from "./migrate.js";
import { redactDatabaseUrl } from "./open-db.js";

export interface DatabaseCheck {
  ok: boolean;
  detail: string;
  fix?: string;
}

export async function checkDatabase(url: string): Promise<DatabaseCheck> {
  if (url.startsWith("sqlite:")) return checkSqlite(url.slice("sqlite:".length));
  if (/^postgres(ql)?:\/\//.test(url)) return checkPostgres(url);
  return {
    ok: false,
    detail: `"${redactDatabaseUrl(url)}" is not a database URL`,
    fix: "write database: sqlite:PATH or postgres://... in config.yaml",
  };
}

function checkSqlite(path: string): DatabaseCheck {
  if (path === ":memory:") return { ok: true, detail: "in memory (nothing is kept when the daemon stops)" };
  if (!existsSync(path)) {
    const where = existsSync(dirname(path)) ? "" : ` (with its folder ${dirname(path)})`;
    return { ok: true, detail: `${path} does not exist yet: the daemon creates it${where} at its first start` };
  }
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const hasTable = db.prepare("SELECT 1 AS n FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get() !== undefined;
    const versions = hasTable
      ? (db.prepare("SELECT version FROM schema_migrations").all() as { version: number }[]).map((r) => r.version)
      : [];
    return schemaVerdict(path, versions, "sqlite");
  } catch (err) {
    return {
      ok: false,
      detail: `${path} cannot be read: ${(err as Error).message}`,
      fix: "restore it from a backup, or move it away to start afresh",
    };
  } finally {
    db?.close();
  }
}

async function checkPostgres(url: string): Promise<DatabaseCheck> {
  const shown = redactDatabaseUrl(url);
  const client = new (loadPg().Client)({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    const table = await client.query("SELECT to_regclass('schema_migrations') AS t");
    const hasTable = (table.rows[0] as { t: string | null } | undefined)?.t !== null;
    const versions = hasTable
      ? (await client.query("SELECT version FROM schema_migrations")).rows.map((r) => Number((r as { version: unknown }).version))
      : [];
    return schemaVerdict(shown, versions, "postgres");
  } catch (err) {
    return {
      ok: false,
      detail: `cannot reach ${shown}: ${(err as Error).message}`,
      fix: "start PostgreSQL, or fix database: in config.yaml",
    };
  } finally {
    await client.end().catch(() => undefined);
  }
}

function schemaVerdict(where: string, versions: number[], dialect: "sqlite" | "postgres"): DatabaseCheck {
  const latest = Math.max(0, ...readMigrations(dialect).map((m) => m.version));
  const at = Math.max(0, ...versions);
  if (at > latest)
    return {
      ok: false,
      detail: `${where} was written by a newer Wardrik (schema ${at}; this one knows up to ${latest})`,
      fix: "upgrade Wardrik (the CLI and the daemon)",
    };
  if (at === 0) return { ok: true, detail: `${where} is empty: the daemon sets it up at its next start` };
  if (at < latest) return { ok: true, detail: `${where} opens (schema ${at}; the daemon brings it to ${latest} at its next start)` };
  return { ok: true, detail: `${where} opens (schema ${at})` };
}
