import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { latestVersion, readMigrations } from "../../src/store/migrate.js";
import { SqliteDb } from "../../src/store/sqlite-db.js";

const SCHEMA_VERSION = latestVersion(readMigrations("sqlite"));

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDb(): { db: SqliteDb; path: string } {
  const dir = mkdtempSync(join(tmpdir(), "wardrik-db-"));
  dirs.push(dir);
  const path = join(dir, "t.db");
  return { db: new SqliteDb(path), path };
}

describe("SqliteDb", () => {
  it("creates the schema and records its version", async () => {
    const { db, path } = tempDb();
    await db.close();
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get()).toEqual({ value: String(SCHEMA_VERSION) });
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    raw.close();
  });

  it("makes a new database with 1 KiB pages (a commit writes whole pages to the WAL) and leaves an existing one's alone", async () => {
    const { db, path } = tempDb();
    await db.close();
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma("page_size", { simple: true })).toBe(1024);
    raw.close();

    const dir = mkdtempSync(join(tmpdir(), "wardrik-db-"));
    dirs.push(dir);
    const older = join(dir, "old.db");
    const made = new Database(older);
    made.pragma("page_size = 4096");
    made.pragma("journal_mode = WAL");
    made.exec("CREATE TABLE t (x)");
    made.close();
    await new SqliteDb(older).close();
    const reopened = new Database(older, { readonly: true });
    expect(reopened.pragma("page_size", { simple: true })).toBe(4096);
    reopened.close();
  });

  it("a transaction that meets another connection's write lock waits for it without blocking the event loop", async () => {
    const dir = mkdtempSync(join(tmpdir(), "wardrik-db-"));
    dirs.push(dir);
    const path = join(dir, "t.db");
    // The blocking wait (busy_timeout) is short here, so the lock outlasts it, as the checkpoint worker's can.
    const db = new SqliteDb(path, { busyTimeoutMs: 20, beginRetryMs: 300, checkpointInBackground: false });
    const other = new Database(path);
    const insert = (p: string) =>
      db.transaction((tx) => tx.run("INSERT INTO files (agent_id, path, content, updated_at) VALUES ('a', ?, 'x', 'now')", [p]));
    try {
      other.exec("BEGIN IMMEDIATE");
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 10);
      setTimeout(() => other.exec("COMMIT"), 150);
      await insert("after-a-wait");
      clearInterval(ticker);
      expect(ticks).toBeGreaterThanOrEqual(5);

      // Held past the retries: that transaction fails with SQLITE_BUSY; the next one, once free, commits.
      other.exec("BEGIN IMMEDIATE");
      const failed = insert("too-late").then(
        () => "committed",
        (err: { code?: string }) => err.code,
      );
      setTimeout(() => other.exec("COMMIT"), 600);
      expect(await failed).toBe("SQLITE_BUSY");
      await new Promise((r) => setTimeout(r, 650));
      await insert("later");
      expect((await db.all<{ path: string }>("SELECT path FROM files ORDER BY path")).map((r) => r.path)).toEqual([
        "after-a-wait",
        "later",
      ]);
    } finally {
      other.close();
      await db.close();
    }
  });

  it("groups concurrent transactions, and a failing one rolls back alone", async () => {
    const { db } = tempDb();
    const write = (path: string, fail = false) =>
      db.transaction(async (tx) => {
        await tx.run("INSERT INTO files (agent_id, path, content, updated_at) VALUES ('a', ?, 'x', 'now')", [path]);
        if (fail) throw new Error(`no ${path}`);
        return path;
      });
    const results = await Promise.allSettled([write("one"), write("two", true), write("three")]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const rows = await db.all<{ path: string }>("SELECT path FROM files ORDER BY path");
    expect(rows.map((r) => r.path)).toEqual(["one", "three"]);
    await db.close();
  });

  it("lets timers and sockets run between the commits of a wave of transactions", async () => {
    const { db } = tempDb();
    let committed = 0;
    let committedWhenTimerRan: number | undefined;
    const wave = Array.from({ length: 2000 }, (_, i) =>
      db.transaction(async (tx) => {
        await tx.run("INSERT INTO files (agent_id, path, content, updated_at) VALUES ('a', ?, 'x', 'now')", [`f${i}`]);
        committed++;
      }),
    );
    setTimeout(() => (committedWhenTimerRan = committed), 0);
    await Promise.all(wave);
    // Without yielding, the whole wave commits before the timer gets a turn.
    expect(committedWhenTimerRan).toBeDefined();
    expect(committedWhenTimerRan!).toBeLessThan(2000);
    expect((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM files"))!.n).toBe(2000);
    await db.close();
  });

  it("refuses a database written by a newer Wardrik", async () => {
    const { db, path } = tempDb();
    await db.close();
    const raw = new Database(path);
    raw.prepare("UPDATE meta SET value = '99' WHERE key = 'schema_version'").run();
    raw.close();
    expect(() => new SqliteDb(path)).toThrow(/newer Wardrik \(schema version 99/);
  });
});
