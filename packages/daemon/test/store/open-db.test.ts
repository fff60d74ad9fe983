/**
 * openDb picks the adapter from config.yaml's `database:` URL, and the daemon
 * opens its database through it: on SQLite in the `sqlite` project, on
 * PostgreSQL in the `postgres` one.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { initProject } from "../../src/cli/init-project.js";
import { startDaemon } from "../../src/daemon.js";
import { openDb } from "../../src/store/open-db.js";
import { PostgresDb } from "../../src/store/postgres-db.js";
import { SqliteDb } from "../../src/store/sqlite-db.js";
import { createTestDatabase, TEST_DIALECT } from "../helpers/test-database.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("openDb", () => {
  it.each(["mysql://db.example/w", "w.db"])("refuses %j, saying which URLs work", async (url) => {
    await expect(openDb(url)).rejects.toThrow(/use sqlite:PATH or postgres:\/\/USER@HOST:PORT\/DB\.$/);
  });

  it("refuses sqlite: without a file", async () => {
    await expect(openDb("sqlite:")).rejects.toThrow('The database URL "sqlite:" names no file: write sqlite:PATH.');
  });

  it(`opens the ${TEST_DIALECT} adapter for this run's database URL, migrated`, async () => {
    const { url } = await createTestDatabase();
    const db = await openDb(url);
    expect(db).toBeInstanceOf(TEST_DIALECT === "postgres" ? PostgresDb : SqliteDb);
    expect(db.dialect.name).toBe(TEST_DIALECT);
    expect(await db.get("SELECT COUNT(*) AS n FROM agents")).toEqual({ n: 0 });
    await db.close();
  });

  if (TEST_DIALECT === "postgres")
    it("accepts postgresql:// as well as postgres://", async () => {
      const { url } = await createTestDatabase();
      const db = await openDb(url.replace(/^postgres:/, "postgresql:"));
      expect(db).toBeInstanceOf(PostgresDb);
      await db.close();
    });
});

describe(`the daemon on ${TEST_DIALECT}`, () => {
  it("keeps its state in the database config.yaml names", async () => {
    const base = mkdtempSync(join(tmpdir(), "wardrik-open-db-"));
    dirs.push(base);
    const dir = join(base, "p");
    initProject(dir);
    const { url } = await createTestDatabase();
    const config = readFileSync(join(dir, "config.yaml"), "utf8").replace(/^database:.*$/m, `database: ${url}`);
    writeFileSync(join(dir, "config.yaml"), config);

    const daemon = await startDaemon(dir, { port: 0, log: () => undefined });
    try {
      const res = await fetch(`${daemon.url}/v1/health`);
      expect(res.status).toBe(200);
    } finally {
      await daemon.close();
    }
    // The admin token the daemon registered at start is in that database.
    const db = await openDb(url);
    expect(await db.get("SELECT COUNT(*) AS n FROM tokens WHERE admin = 1")).toEqual({ n: 1 });
    await db.close();
  });
});
