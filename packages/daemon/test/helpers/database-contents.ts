/**
 * Everything a project's database holds, as text, for tests that must show a
 * value is nowhere in it: on SQLite the raw bytes of the database file and
 * its WAL, on PostgreSQL every row of every table.
 */
import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { sideConnection } from "./side-connection.js";

/** The database a project's config.yaml names, as a URL a side connection opens. */
export function projectDatabaseUrl(dir: string, configYaml: string): string {
  const url = /^database:\s*(\S+)/m.exec(configYaml)?.[1] ?? "sqlite:.wardrik/wardrik.db";
  if (!url.startsWith("sqlite:")) return url;
  const path = url.slice("sqlite:".length);
  return `sqlite:${isAbsolute(path) ? path : join(dir, path)}`;
}

/** How the CLI names the database in messages: the SQLite file's path, or the PostgreSQL URL without credentials. */
export function databaseLabel(url: string): string {
  if (url.startsWith("sqlite:")) return url.slice("sqlite:".length);
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}`;
}

export async function databaseContents(url: string): Promise<{ where: string; text: string }[]> {
  if (url.startsWith("sqlite:")) {
    const path = url.slice("sqlite:".length);
    return [path, `${path}-wal`, `${path}-shm`].filter((f) => existsSync(f)).map((f) => ({ where: f, text: readFileSync(f, "latin1") }));
  }
  const db = await sideConnection(url);
  try {
    const tables = await db.all<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'");
    const out: { where: string; text: string }[] = [];
    for (const { table_name } of tables) {
      const rows = await db.all<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM "${table_name}" t`);
      out.push({ where: `table ${table_name}`, text: rows.map((r) => r.row).join("\n") });
    }
    return out;
  } finally {
    await db.close();
  }
}
