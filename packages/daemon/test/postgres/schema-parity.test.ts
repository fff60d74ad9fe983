/**
 * The two dialects' migrations build the same schema. Every migration runs
 * on a fresh SQLite file and on a fresh PostgreSQL database; both schemas are
 * read back from the databases themselves (SQLite's pragmas, PostgreSQL's
 * catalogs) and compared: tables, columns (types mapped to SQLite's storage
 * classes, NOT NULL), primary keys, unique keys and indexes (by their columns,
 * uniqueness and whether they are partial). Column defaults are not compared:
 * each dialect writes them in its own functions.
 *
 * The differences that are meant are listed in INTENDED, each with why; any
 * other difference fails here. PostgreSQL only: the comparison needs its server.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Db } from "../../src/store/db.js";
import { openDb } from "../../src/store/open-db.js";
import { createTestDatabase } from "../helpers/test-database.js";

interface Schema {
  /** `table.column` -> `TYPE [NOT NULL]` */
  columns: Map<string, string>;
  /** `table (a, b)` with `primary`, `unique`, `index`, and ` partial` when it has a WHERE. */
  keys: Set<string>;
}

/** PostgreSQL's types as the SQLite storage class the same column uses. */
const STORAGE_CLASS: Record<string, string> = {
  text: "TEXT",
  "character varying": "TEXT",
  jsonb: "TEXT",
  json: "TEXT",
  bigint: "INTEGER",
  integer: "INTEGER",
  smallint: "INTEGER",
  boolean: "INTEGER",
  "double precision": "REAL",
  real: "REAL",
  numeric: "REAL",
  bytea: "BLOB",
};

/**
 * Differences that are meant: each the line `sqlite: X` / `postgres: Y` of
 * one column or key, with the reason. Anything else that differs is a bug in
 * one dialect's migrations.
 */
const FEED_ORDER =
  "the feed's order: SQLite commits one writer at a time in rowid order, so rowid is the position; PostgreSQL hands out positions (gseq) before commit and orders by the writing transaction (txid) first (store/event-feed.ts)";
const META =
  "release 0.1 recorded SQLite files' version in meta.schema_version only; it is kept current so such a release refuses a newer file (store/migrate.ts). No PostgreSQL database predates schema_migrations";
const INTENDED: Record<string, string> = {
  "postgres: events.gseq INTEGER NOT NULL": FEED_ORDER,
  "postgres: events.txid XID8 NOT NULL": FEED_ORDER,
  "postgres: events (org, txid, gseq) index": FEED_ORDER,
  "sqlite: events (org) index": FEED_ORDER,
  "sqlite: meta (key) primary": META,
  "sqlite: meta.key TEXT NOT NULL": META,
  "sqlite: meta.value TEXT NOT NULL": META,
};

async function sqliteSchema(db: Db): Promise<Schema> {
  const columns = new Map<string, string>();
  const keys = new Set<string>();
  const tables = await db.all<{ name: string }>(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
  );
  for (const { name: table } of tables) {
    const cols = await db.all<{ name: string; type: string; notnull: number; pk: number }>("SELECT * FROM pragma_table_info(?)", [table]);
    for (const c of cols) columns.set(`${table}.${c.name}`, `${c.type.toUpperCase()}${c.notnull || c.pk ? " NOT NULL" : ""}`);
    const pk = cols.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk);
    if (pk.length) keys.add(`${table} (${pk.map((c) => c.name).join(", ")}) primary`);
    const indexes = await db.all<{ name: string; unique: number; origin: string; partial: number }>("SELECT * FROM pragma_index_list(?)", [
      table,
    ]);
    for (const ix of indexes) {
      if (ix.origin === "pk") continue;
      const parts = await db.all<{ name: string | null }>("SELECT * FROM pragma_index_info(?) ORDER BY seqno", [ix.name]);
      const names = parts.map((p) => p.name ?? "<expression>").join(", ");
      keys.add(`${table} (${names}) ${ix.unique ? "unique" : "index"}${ix.partial ? " partial" : ""}`);
    }
  }
  return { columns, keys };
}

async function postgresSchema(db: Db): Promise<Schema> {
  const columns = new Map<string, string>();
  const keys = new Set<string>();
  const cols = await db.all<{ table_name: string; column_name: string; data_type: string; is_nullable: string }>(
    `SELECT c.table_name, c.column_name, c.data_type, c.is_nullable FROM information_schema.columns c
     JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
     WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'`,
  );
  for (const c of cols)
    columns.set(
      `${c.table_name}.${c.column_name}`,
      `${STORAGE_CLASS[c.data_type] ?? c.data_type.toUpperCase()}${c.is_nullable === "NO" ? " NOT NULL" : ""}`,
    );
  const indexes = await db.all<{ tablename: string; indexdef: string; primary: number }>(
    `SELECT i.tablename, i.indexdef, CASE WHEN x.indisprimary THEN 1 ELSE 0 END AS primary
     FROM pg_indexes i JOIN pg_class c ON c.relname = i.indexname JOIN pg_index x ON x.indexrelid = c.oid
     WHERE i.schemaname = current_schema()`,
  );
  for (const ix of indexes) {
    const m = /^CREATE (UNIQUE )?INDEX \S+ ON \S+ USING \w+ \((.*?)\)( WHERE .*)?$/.exec(ix.indexdef);
    if (!m) throw new Error(`an index this test cannot read: ${ix.indexdef}`);
    const names = m[2]!
      .split(", ")
      .map((n) => (/^"?[a-z_][a-z0-9_]*"?$/.test(n) ? n.replaceAll('"', "") : "<expression>"))
      .join(", ");
    const kind = ix.primary ? "primary" : m[1] ? "unique" : "index";
    keys.add(`${ix.tablename} (${names}) ${kind}${m[3] ? " partial" : ""}`);
  }
  return { columns, keys };
}

/** The lines one schema has and the other has not, as `sqlite: ...` / `postgres: ...`. */
function differences(sqlite: Schema, postgres: Schema): string[] {
  const out: string[] = [];
  for (const [col, type] of sqlite.columns) if (postgres.columns.get(col) !== type) out.push(`sqlite: ${col} ${type}`);
  for (const [col, type] of postgres.columns) if (sqlite.columns.get(col) !== type) out.push(`postgres: ${col} ${type}`);
  for (const key of sqlite.keys) if (!postgres.keys.has(key)) out.push(`sqlite: ${key}`);
  for (const key of postgres.keys) if (!sqlite.keys.has(key)) out.push(`postgres: ${key}`);
  return out.sort();
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("the two dialects' schemas after every migration", () => {
  it("have the same tables, columns, types, keys and indexes, but for the differences listed with their reason", async () => {
    const dir = mkdtempSync(join(tmpdir(), "wardrik-schema-"));
    dirs.push(dir);
    const sqlite = await openDb(`sqlite:${join(dir, "wardrik.db")}`);
    const pgDatabase = await createTestDatabase();
    const postgres = await openDb(pgDatabase.url);
    try {
      const a = await sqliteSchema(sqlite);
      const b = await postgresSchema(postgres);
      // The dump reads what it should: both see the core tables and their keys.
      expect(a.columns.get("agents.id")).toBe("TEXT NOT NULL");
      expect(b.keys).toContain("agents (id) primary");
      expect(a.columns.size).toBeGreaterThan(50);
      const found = differences(a, b);
      expect(found.filter((d) => !(d in INTENDED))).toEqual([]);
      // A listed difference that is gone is taken off the list.
      expect(Object.keys(INTENDED).filter((d) => !found.includes(d))).toEqual([]);
    } finally {
      await sqlite.close();
      await postgres.close();
    }
  });
});
