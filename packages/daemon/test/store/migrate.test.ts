/**
 * The migration runner (store/migrate.ts) on the dialect of the vitest
 * project; races and the release-0.1 fixture where they apply.
 */
import Database from "better-sqlite3";
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { Db } from "../../src/store/db.js";
import { latestVersion, migrateSqlite, readMigrations, type Migration, type MigrationResult } from "../../src/store/migrate.js";
import { openDb } from "../../src/store/open-db.js";
import { PostgresDb } from "../../src/store/postgres-db.js";
import { createTestDatabase, openTestDb, TEST_DIALECT } from "../helpers/test-database.js";

const KNOWN = readMigrations(TEST_DIALECT);
const LATEST = latestVersion(KNOWN);
const withNext = (sql: string, name = "next_step"): Migration[] => [...KNOWN, { version: LATEST + 1, name, sql }];

/** Runs the runner once more on a database, the way a second daemon start would. */
async function migrateAgain(url: string, known?: readonly Migration[]): Promise<MigrationResult> {
  if (url.startsWith("sqlite:")) {
    const raw = new Database(url.slice("sqlite:".length));
    try {
      return migrateSqlite(raw, known);
    } finally {
      raw.close();
    }
  }
  const db = new PostgresDb(url);
  try {
    return await db.migrate(known);
  } finally {
    await db.close();
  }
}

function recorded(db: Db) {
  return db.all<{ version: number; name: string }>("SELECT version, name FROM schema_migrations ORDER BY version");
}

describe(`migrations on ${TEST_DIALECT}`, () => {
  it("gives a fresh database every migration, each recorded with its name and time", async () => {
    const { db } = await openTestDb();
    expect(await recorded(db)).toEqual(KNOWN.map((m) => ({ version: m.version, name: m.name })));
    const first = await db.get<{ applied_at: string }>("SELECT applied_at FROM schema_migrations WHERE version = 1");
    expect(new Date(first!.applied_at).toISOString()).toBe(first!.applied_at);
    expect(await db.get("SELECT COUNT(*) AS n FROM agents")).toEqual({ n: 0 });
    await db.close();
  });

  it("applies nothing on a second run, and a new migration exactly once", async () => {
    const { db, database } = await openTestDb();
    expect(await migrateAgain(database.url)).toEqual({ applied: [], version: LATEST });
    const next = withNext("CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT NOT NULL)");
    expect(await migrateAgain(database.url, next)).toEqual({ applied: [LATEST + 1], version: LATEST + 1 });
    expect(await migrateAgain(database.url, next)).toEqual({ applied: [], version: LATEST + 1 });
    await db.run("INSERT INTO notes (id, body) VALUES (?, ?)", ["n1", "kept"]);
    expect((await recorded(db)).at(-1)).toEqual({ version: LATEST + 1, name: "next_step" });
    await db.close();
  });

  it("applies nothing of a migration that fails half-way, and says which file failed", async () => {
    const { db, database } = await openTestDb();
    const broken = withNext("CREATE TABLE half (id TEXT); INSERT INTO nowhere (id) VALUES ('x')", "broken");
    const file = `${TEST_DIALECT}/${String(LATEST + 1).padStart(3, "0")}_broken.sql`;
    await expect(migrateAgain(database.url, broken)).rejects.toThrow(`Migration ${file} failed, nothing of it was applied: `);
    // (async: SqliteDb throws a bad statement synchronously, PostgresDb rejects)
    await expect((async () => db.all("SELECT * FROM half"))()).rejects.toThrow(/half/);
    expect(await recorded(db)).toHaveLength(KNOWN.length);
    await db.close();
  });

  it("refuses a database written by a newer Wardrik", async () => {
    const { db, database } = await openTestDb();
    await db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", [999, "future", "2099-01-01T00:00:00.000Z"]);
    await db.close();
    const newer = `The database was written by a newer Wardrik (schema version 999; this one knows up to ${LATEST}). Upgrade Wardrik.`;
    await expect(migrateAgain(database.url)).rejects.toThrow(newer);
    await expect(openDb(database.url)).rejects.toThrow(newer);
  });
});

if (TEST_DIALECT === "postgres") {
  it("lets two daemons starting at once both succeed, with every migration run once (PostgreSQL)", async () => {
    const { url } = await createTestDatabase();
    const runners = Array.from({ length: 4 }, () => new PostgresDb(url));
    const results = await Promise.all(runners.map((r) => r.migrate()));
    expect(results.map((r) => r.version)).toEqual([LATEST, LATEST, LATEST, LATEST]);
    expect(results.flatMap((r) => r.applied).sort((a, b) => a - b)).toEqual(KNOWN.map((m) => m.version));
    expect(await recorded(runners[0]!)).toEqual(KNOWN.map((m) => ({ version: m.version, name: m.name })));
    await Promise.all(runners.map((r) => r.close()));
  });
}

/** The runner as `npm run build` wrote it, for child processes that run it with plain node. */
function builtMigrate(): string {
  const path = fileURLToPath(new URL("../../dist/store/migrate.js", import.meta.url));
  if (!existsSync(path)) throw new Error(`${path} does not exist: run \`npm run build\` at the repository root first.`);
  return path;
}

/**
 * Another process that takes the write lock of the SQLite file at `path` (BEGIN IMMEDIATE) and holds it
 * until told to let go: `releaseAfter(ms)` asks it to commit that long after the message reaches it.
 */
function holdWriteLock(path: string) {
  const script = `
    const { default: Database } = await import("better-sqlite3");
    const db = new Database(${JSON.stringify(path)});
    db.pragma("journal_mode = WAL");
    db.exec("BEGIN IMMEDIATE");
    process.stdout.write("locked\\n");
    process.stdin.setEncoding("utf8").once("data", (ms) => setTimeout(() => { db.exec("COMMIT"); db.close(); process.stdin.destroy(); }, Number(ms)));`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["pipe", "pipe", "pipe"] });
  let err = "";
  child.stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
  const done = new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.once("close", (code) => resolve({ code, stderr: err })),
  );
  const locked = new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding("utf8").on("data", (c: string) => c.includes("locked") && resolve());
    void done.then((d) => reject(new Error(`the lock holder ended before it held the lock (${d.code}): ${d.stderr}`)));
  });
  return { locked, done, releaseAfter: (ms: number) => void child.stdin.write(String(ms)) };
}

if (TEST_DIALECT === "sqlite") {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const tempDir = () => {
    const d = mkdtempSync(join(tmpdir(), "wardrik-migrate-"));
    dirs.push(d);
    return d;
  };

  it("lets two processes migrating one new file at once both succeed, with every migration run once (SQLite)", async () => {
    const path = join(tempDir(), "race.db");
    // The built runner, run by plain node: compiling the TypeScript in each child made them start slowly under load.
    const runner = builtMigrate();
    // A last migration slow enough (a few hundred ms) that the two runs overlap.
    const slow = "CREATE TABLE slow AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000) SELECT x FROM c";
    const known = withNext(slow, "slow");
    // The file is made WAL here, once: two processes switching a new file's journal mode at once is not what this tests.
    const init = new Database(path);
    init.pragma("journal_mode = WAL");
    init.close();
    const script = `
      const { migrateSqlite } = await import(${JSON.stringify(runner)});
      const { default: Database } = await import("better-sqlite3");
      const db = new Database(${JSON.stringify(path)});
      db.pragma("journal_mode = WAL");
      process.stdout.write("ready\\n");
      await new Promise((go) => process.stdin.once("data", go));
      const result = migrateSqlite(db, ${JSON.stringify(known)});
      db.close();
      process.stdout.write(JSON.stringify(result));
      process.stdin.destroy();`;
    const children = [0, 1].map(() => {
      const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["pipe", "pipe", "pipe"] });
      let out = "";
      let err = "";
      let ready!: () => void;
      const readySeen = new Promise<void>((resolve) => (ready = resolve));
      child.stdout.setEncoding("utf8").on("data", (c: string) => {
        out += c;
        if (out.startsWith("ready\n")) ready();
      });
      child.stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
      const done = new Promise<{ code: number | null; result: string; stderr: string }>((resolve) =>
        child.once("close", (code) => resolve({ code, result: out.replace("ready\n", ""), stderr: err })),
      );
      // A child that ends before it is ready fails the test with its stderr instead of hanging it.
      const isReady = Promise.race([
        readySeen,
        done.then((d) => Promise.reject(new Error(`a migrating process ended before it was ready (${d.code}): ${d.stderr}`))),
      ]);
      return { child, isReady, done };
    });
    await Promise.all(children.map((c) => c.isReady));
    for (const c of children) c.child.stdin.write("go\n");
    const ends = await Promise.all(children.map((c) => c.done));
    expect(ends.map((e) => [e.code, e.stderr])).toEqual([
      [0, ""],
      [0, ""],
    ]);
    const applied = ends.map((e) => (JSON.parse(e.result) as MigrationResult).applied);
    expect(applied.flat().sort((a, b) => a - b)).toEqual(known.map((m) => m.version));
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare("SELECT version, name FROM schema_migrations").all()).toEqual(
      known.map((m) => ({ version: m.version, name: m.name })),
    );
    raw.close();
  });

  it("waits for the write lock another process holds past the busy timeout, then migrates (SQLite)", async () => {
    const path = join(tempDir(), "held.db");
    const holder = holdWriteLock(path);
    await holder.locked;
    const db = new Database(path);
    try {
      // A busy_timeout far shorter than the hold: the runner itself must keep waiting.
      db.pragma("busy_timeout = 20");
      holder.releaseAfter(500);
      expect(migrateSqlite(db, KNOWN, 60_000)).toEqual({ applied: KNOWN.map((m) => m.version), version: LATEST });
    } finally {
      db.close();
    }
    expect(await holder.done).toEqual({ code: 0, stderr: "" });
  });

  it("gives up waiting for the write lock after the wait it was given, with SQLite's error (SQLite)", async () => {
    const path = join(tempDir(), "stuck.db");
    const holder = holdWriteLock(path);
    await holder.locked;
    const db = new Database(path);
    try {
      db.pragma("busy_timeout = 20");
      expect(() => migrateSqlite(db, KNOWN, 200)).toThrow(/database is locked/);
    } finally {
      db.close();
      holder.releaseAfter(0);
    }
    expect(await holder.done).toEqual({ code: 0, stderr: "" });
  });

  it("recognises a database of release 0.1 (state-v1.db) as migrated to 1, keeps its data, and upgrades it", async () => {
    const path = join(tempDir(), "state-v1.db");
    copyFileSync(fileURLToPath(new URL("../fixtures/state-v1.db", import.meta.url)), path);
    const before = new Database(path, { readonly: true });
    const agents = before.prepare("SELECT id, name FROM agents ORDER BY id").all();
    const hasLedger = before.prepare("SELECT name FROM sqlite_master WHERE name = 'schema_migrations'").get();
    before.close();
    expect(agents.length).toBeGreaterThan(0);
    expect(hasLedger).toBeUndefined();

    // 001 already holds (running it again would fail: its tables exist); only later ones run.
    const upgraded = await migrateAgain(`sqlite:${path}`);
    expect(upgraded).toEqual({ applied: KNOWN.filter((m) => m.version > 1).map((m) => m.version), version: LATEST });
    const db = await openDb(`sqlite:${path}`);
    expect(await recorded(db)).toEqual(KNOWN.map((m) => ({ version: m.version, name: m.name })));
    expect(await db.all("SELECT id, name FROM agents ORDER BY id")).toEqual(agents);
    await db.close();

    const next = withNext("ALTER TABLE agents ADD COLUMN note TEXT");
    expect(await migrateAgain(`sqlite:${path}`, next)).toEqual({ applied: [LATEST + 1], version: LATEST + 1 });
    const after = new Database(path, { readonly: true });
    // Release 0.1 reads only meta.schema_version: it must see the newer schema and refuse it.
    expect(after.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get()).toEqual({ value: String(LATEST + 1) });
    after.close();
  });
}
