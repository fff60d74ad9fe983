/**
 * The Db/Tx contract, run on the dialect of the vitest project: SQLite in
 * `sqlite`, PostgreSQL in `postgres` (WARDRIK_TEST_DB). What only one adapter
 * has (PostgreSQL's concurrent transactions, LISTEN/NOTIFY, a lost
 * connection) is defined only in that project's run.
 */
import { startTestPostgres } from "@wardrik/testing/postgres";
import { existsSync } from "node:fs";
import pg from "pg";
import { describe, expect, it } from "vitest";
import type { Db, Tx } from "../../src/store/db.js";
import { openDb } from "../../src/store/open-db.js";
import type { PostgresDb } from "../../src/store/postgres-db.js";
import { openTestDb, postgresUrl, TEST_DIALECT } from "../helpers/test-database.js";

const FILE = "INSERT INTO files (agent_id, path, content, updated_at) VALUES (?, ?, ?, 'now')";

async function paths(db: Db): Promise<string[]> {
  return (await db.all<{ path: string }>("SELECT path FROM files ORDER BY path")).map((r) => r.path);
}

/** Resolves once `n` callers have arrived: lets two transactions meet half-way. */
function barrier(n: number): () => Promise<void> {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return () => {
    if (++arrived === n) open();
    return opened;
  };
}

describe(`Db on ${TEST_DIALECT}`, () => {
  it("binds ? placeholders in order, and a ? inside a literal stays text", async () => {
    const { db } = await openTestDb();
    await db.run("INSERT INTO files (agent_id, path, content, updated_at) VALUES (?, 'why?', ?, ?)", ["a", "body", "t1"]);
    expect(await db.get("SELECT agent_id, path, content, updated_at FROM files WHERE path = ? AND agent_id = ?", ["why?", "a"])).toEqual({
      agent_id: "a",
      path: "why?",
      content: "body",
      updated_at: "t1",
    });
    await db.close();
  });

  it("reports the rows a statement changed, outside and inside a transaction", async () => {
    const { db } = await openTestDb();
    for (const p of ["x", "y", "z"]) expect(await db.run(FILE, ["a", p, "c"])).toEqual({ changes: 1 });
    expect(await db.run("UPDATE files SET content = ? WHERE path IN (?, ?)", ["d", "x", "y"])).toEqual({ changes: 2 });
    expect(await db.run("DELETE FROM files WHERE path = ?", ["nothing"])).toEqual({ changes: 0 });
    const inside = await db.transaction((tx) => tx.run("DELETE FROM files WHERE content = ?", ["d"]));
    expect(inside).toEqual({ changes: 2 });
    expect(await paths(db)).toEqual(["z"]);
    await db.close();
  });

  it("commits everything a transaction wrote, or nothing when it throws", async () => {
    const { db } = await openTestDb();
    const value = await db.transaction(async (tx) => {
      await tx.run(FILE, ["a", "one", "c"]);
      await tx.run(FILE, ["a", "two", "c"]);
      return "done";
    });
    expect(value).toBe("done");
    await expect(
      db.transaction(async (tx) => {
        await tx.run(FILE, ["a", "three", "c"]);
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    expect(await paths(db)).toEqual(["one", "two"]);
    await db.close();
  });

  it("rolls back the whole transaction when a statement fails, and the connection serves the next one", async () => {
    // One connection on PostgreSQL, so the next transaction runs on the one that failed.
    const { db } = await openTestDb({ poolSize: 1 });
    await db.run(FILE, ["a", "taken", "c"]);
    await expect(
      db.transaction(async (tx) => {
        await tx.run(FILE, ["a", "fresh", "c"]);
        await tx.run(FILE, ["a", "taken", "again"]); // primary key (agent_id, path) exists
      }),
    ).rejects.toThrow(/UNIQUE|unique/);
    expect(await paths(db)).toEqual(["taken"]);
    await db.transaction((tx) => tx.run(FILE, ["a", "after", "c"]));
    expect(await paths(db)).toEqual(["after", "taken"]);
    await db.close();
  });

  it("returns BIGINT columns, COUNT(*), SUM() and comparisons as numbers", async () => {
    const { db } = await openTestDb();
    const big = 2 ** 40 + 7; // beyond 32 bits, well below 2^53
    const event = "INSERT INTO events (agent_id, seq, id, org, type, time, data) VALUES ('a', ?, ?, 'o', 't', 'now', '{}')";
    await db.run(event, [big, "e1"]);
    await db.run(event, [5n, "e2"]); // a bigint parameter binds too
    const row = await db.get("SELECT MAX(seq) AS top, COUNT(*) AS n, SUM(seq) AS total, (1 = 1) AS yes FROM events");
    expect(row).toEqual({ top: big, n: 2, total: big + 5, yes: 1 });
    await db.close();
  });

  it("keeps concurrent transactions atomic: each commits alone, a failing one leaves no trace", async () => {
    const { db } = await openTestDb();
    const write = (i: number) =>
      db.transaction(async (tx: Tx) => {
        for (const part of ["a", "b", "c"]) await tx.run(FILE, ["a", `${i}-${part}`, "c"]);
        if (i % 5 === 0) throw new Error(`no ${i}`);
      });
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => write(i)));
    expect(results.filter((r) => r.status === "rejected")).toHaveLength(4);
    const written = await paths(db);
    expect(written).toHaveLength(16 * 3);
    expect(written.some((p) => p.startsWith("5-") || p.startsWith("10-"))).toBe(false);
    await db.close();
  });
});

if (TEST_DIALECT === "postgres") {
  describe("PostgresDb", () => {
    it("runs two transactions on two connections at once, each statement on its own transaction's connection", async () => {
      const { db } = await openTestDb();
      const meet = barrier(2);
      const pids = { a: new Set<unknown>(), b: new Set<unknown>() };
      const run = (name: "a" | "b", commit: boolean) =>
        db.transaction(async (tx) => {
          const pid = () => tx.get("SELECT pg_backend_pid() AS pid").then((r) => pids[name].add(r!.pid));
          await pid();
          await tx.run(FILE, ["a", `${name}-1`, "c"]);
          await meet(); // both are open now: neither waited for the other to finish
          await pid();
          // READ COMMITTED: a transaction sees its own rows, not the other's uncommitted ones.
          expect((await tx.all<{ path: string }>("SELECT path FROM files")).map((r) => r.path)).toEqual([`${name}-1`]);
          await tx.run(FILE, ["a", `${name}-2`, "c"]);
          await pid();
          if (!commit) throw new Error(`${name} rolls back`);
        });
      const [a, b] = await Promise.allSettled([run("a", true), run("b", false)]);
      expect(a.status).toBe("fulfilled");
      expect(b.status).toBe("rejected");
      expect(pids.a.size).toBe(1);
      expect(pids.b.size).toBe(1);
      expect([...pids.a][0]).not.toBe([...pids.b][0]);
      expect(await paths(db)).toEqual(["a-1", "a-2"]);
      await db.close();
    });

    it("refuses a statement on a Tx after its transaction ended", async () => {
      const { db } = await openTestDb();
      let leaked: Tx | undefined;
      await db.transaction(async (tx) => void (leaked = tx));
      await expect(leaked!.run(FILE, ["a", "late", "c"])).rejects.toThrow(/transaction has ended/);
      expect(await paths(db)).toEqual([]);
      await db.close();
    });

    it("destroys a connection that broke mid-transaction instead of reusing it", async () => {
      const { db } = await openTestDb({ poolSize: 1 });
      const admin = new pg.Client({ connectionString: postgresUrl() });
      await admin.connect();
      let victim: unknown;
      await expect(
        db.transaction(async (tx) => {
          await tx.run(FILE, ["a", "lost", "c"]);
          victim = (await tx.get("SELECT pg_backend_pid() AS pid"))!.pid;
          await admin.query("SELECT pg_terminate_backend($1)", [victim]);
          await tx.run(FILE, ["a", "lost-too", "c"]);
        }),
      ).rejects.toThrow();
      await admin.end();
      const next = await db.transaction((tx) => tx.get("SELECT pg_backend_pid() AS pid"));
      expect(next!.pid).not.toBe(victim);
      expect(await paths(db)).toEqual([]);
      await db.close();
    });

    it("delivers a NOTIFY sent in a transaction only once it commits, and never one rolled back", async () => {
      const { db } = await openTestDb();
      const pgdb = db as PostgresDb;
      const got: string[] = [];
      const arrived = (payload: string) => expect.poll(() => got.includes(payload), { timeout: 10_000 }).toBe(true);
      const stop = await pgdb.listen("wake", (p) => got.push(p));
      await pgdb.transaction(async (tx) => {
        await pgdb.notify(tx, "wake", "from-tx");
        // Committed after the notify above was queued, and delivered: the listener is caught up, the tx's one is not there.
        await db.run("SELECT pg_notify(?, ?)", ["wake", "marker-1"]);
        await arrived("marker-1");
        expect(got).toEqual(["marker-1"]);
      });
      await arrived("from-tx");
      await expect(
        pgdb.transaction(async (tx) => {
          await pgdb.notify(tx, "wake", "rolled-back");
          throw new Error("no");
        }),
      ).rejects.toThrow("no");
      await pgdb.transaction((tx) => pgdb.notify(tx, "wake", "marker-2"));
      await arrived("marker-2");
      expect(got).toEqual(["marker-1", "from-tx", "marker-2"]);
      await stop();
      await pgdb.transaction((tx) => pgdb.notify(tx, "wake", "unheard"));
      await db.close();
      expect(got).not.toContain("unheard");
    });

    it("re-LISTENs after the LISTEN connection is lost, and says so", async () => {
      const { db } = await openTestDb({ log: () => undefined });
      const pgdb = db as PostgresDb;
      const got: string[] = [];
      let reconnects = 0;
      await pgdb.listen("wake", (p) => got.push(p), { onReconnect: () => reconnects++ });
      await db.run("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'");
      await expect.poll(() => reconnects, { timeout: 10_000 }).toBe(1);
      await db.run("SELECT pg_notify(?, ?)", ["wake", "after"]);
      await expect.poll(() => got, { timeout: 10_000 }).toEqual(["after"]);
      await db.close();
    });

    it("names the database without its password when it cannot be opened", async () => {
      const wrong = new URL(postgresUrl());
      wrong.password = "not-the-password-42";
      const err = await openDb(wrong.toString()).catch((e: unknown) => e as Error);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toMatch(
        /^Cannot open the PostgreSQL database postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/postgres: /,
      );
      expect((err as Error).message).not.toContain("not-the-password-42");
    });

    it("leaves no server process or data directory behind when a test server stops", async () => {
      const server = await startTestPostgres();
      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      expect((await client.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
      await client.end();
      expect(() => process.kill(server.pid, 0)).not.toThrow();
      await server.stop();
      expect(() => process.kill(server.pid, 0)).toThrow(/ESRCH/);
      expect(existsSync(server.dataDir)).toBe(false);
      const late = new pg.Client({ connectionString: server.url, connectionTimeoutMillis: 2000 });
      await expect(late.connect()).rejects.toThrow(/ECONNREFUSED/);
    });
  });
}
