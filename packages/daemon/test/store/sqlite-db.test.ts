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

/**
 * A database and another connection to its file. The database's blocking wait (busy_timeout) is short, so
 * the other's write lock outlasts it, as the checkpoint worker's can; its transactions retry for `retryMs`.
 */
function beside(retryMs: number) {
  const dir = mkdtempSync(join(tmpdir(), "wardrik-db-"));
  dirs.push(dir);
  const path = join(dir, "t.db");
  const db = new SqliteDb(path, { busyTimeoutMs: 20, beginRetryMs: retryMs, checkpointInBackground: false });
  const other = new Database(path);
  const insert = (p: string) =>
    db.transaction((tx) => tx.run("INSERT INTO files (agent_id, path, content, updated_at) VALUES ('a', ?, 'x', 'now')", [p]));
  return { db, other, insert };
}

describe("SqliteDb", () => {
  it("keeps each connection's page cache at 4 MiB, not the 16 MiB better-sqlite3 builds SQLite with", async () => {
    const { db } = tempDb();
    expect(await db.get<{ cache_size: number }>("PRAGMA cache_size")).toEqual({ cache_size: -4096 });
    expect(await db.committed.get<{ cache_size: number }>("PRAGMA cache_size")).toEqual({ cache_size: -4096 });
    await db.close();
  });

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
    // The retries go on for as long as a busy machine may take to turn the event loop a few times.
    const { db, other, insert } = beside(30_000);
    try {
      other.exec("BEGIN IMMEDIATE");
      // The lock is let go from a timer once the event loop has turned five times: the insert can only commit if
      // the loop kept turning while it waited (a blocking wait would hold the timers, and the lock, until it gave up).
      let ticks = 0;
      const ticker = setInterval(() => {
        if (++ticks === 5) other.exec("COMMIT");
      }, 10);
      const inserted = insert("after-a-wait").finally(() => clearInterval(ticker));
      await inserted;
      expect(ticks).toBeGreaterThanOrEqual(5);
    } finally {
      other.close();
      await db.close();
    }
  });

  it("a transaction that meets the write lock past its retries fails with SQLITE_BUSY; the next one, once free, commits", async () => {
    const { db, other, insert } = beside(300);
    try {
      // Held until the transaction has given up.
      other.exec("BEGIN IMMEDIATE");
      const failed = await insert("too-late").then(
        () => "committed",
        (err: { code?: string }) => err.code,
      );
      other.exec("COMMIT");
      expect(failed).toBe("SQLITE_BUSY");
      await insert("later");
      expect((await db.all<{ path: string }>("SELECT path FROM files ORDER BY path")).map((r) => r.path)).toEqual(["later"]);
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

  it("a transaction lets the event loop turn after a large statement; what others ask meanwhile stays out of it", async () => {
    const { db } = tempDb();
    const insert = "INSERT INTO files (agent_id, path, content, updated_at) VALUES ('a', ?, ?, 'now')";
    const seen: { read?: number; wrote?: Promise<unknown> } = {};
    const big = db.transaction(async (tx) => {
      // A megabyte, as a large message or tool result is: after it, the event loop turns (sockets, immediates) before the commit.
      setImmediate(() => {
        seen.read = undefined;
        void db.get<{ n: number }>("SELECT COUNT(*) AS n FROM files").then((r) => (seen.read = r!.n));
        seen.wrote = db.run(insert, ["outside", "y"]);
      });
      await tx.run(insert, ["big", "x".repeat(1_000_000)]);
      expect(seen.wrote).toBeDefined();
      throw new Error("rolled back");
    });
    await expect(big).rejects.toThrow("rolled back");
    await seen.wrote;
    // The read saw committed rows only (not the big one), and the write outside is not undone with the transaction.
    expect(seen.read).toBe(0);
    expect((await db.all<{ path: string }>("SELECT path FROM files")).map((r) => r.path)).toEqual(["outside"]);
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
