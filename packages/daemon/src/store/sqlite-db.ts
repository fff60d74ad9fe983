import Database from "better-sqlite3";
import { sqliteDialect } from "./sqlite-dialect.js";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { createRequire } from "node:module";
import { Checkpointer, DEFAULT_RESTART_FRAMES } from "./checkpointer.js";
import type { Db, DbStats, Reads, Row, SqlValue, Tx } from "./db.js";
import { migrateSqlite } from "./migrate.js";
import { OrgFairQueue } from "./org-fair-queue.js";

/** A transaction waiting for its batch. */
interface PendingTx {
  fn: (tx: Tx) => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

export interface SqliteOptions {
  /** `FULL` fsyncs every commit; `NORMAL` (default) survives a killed process, not a power cut. */
  synchronous?: "NORMAL" | "FULL";
  /** Checkpoint the WAL from a worker thread (default) instead of inside commits. */
  checkpointInBackground?: boolean;
  /** How long a statement waits, blocking, for a lock another connection holds (default 5 s). */
  busyTimeoutMs?: number;
  /** How long a transaction keeps retrying, without blocking, to start while another connection writes (default 30 s). */
  beginRetryMs?: number;
  /** WAL frames (pages) after which the background checkpoint makes the WAL start over (default 65,536: 64 MiB of 1 KiB pages). */
  walRestartFrames?: number;
}

const MAX_GROUP = 64;
const PAGE_SIZE = 1024;
/**
 * The page cache of each connection, in KiB. better-sqlite3 builds SQLite
 * with 16 MiB, which the writer and the reader each fill once the database
 * outgrows it: about 25 MB of a daemon's memory with 10,000 agents asleep
 * (`npm run bench -- sleep`), for no speed W1, W3 or W4 could measure. The
 * operating system's cache still holds the file.
 */
const CACHE_KIB = 4096;
/**
 * A statement of a transaction whose parameters hold more characters than
 * this (a megabyte message, a tool's large result) writes for a long while:
 * before and after it the transaction lets the event loop turn once, so one
 * org's large write does not hold every other request until it commits.
 */
const LARGE_STATEMENT_CHARS = 64 * 1024;

/**
 * SQLite adapter (WAL). better-sqlite3 is synchronous, so a transaction that
 * awaits would let other callers interleave on the one connection: a promise
 * chain serialises transactions instead.
 */
export class SqliteDb implements Db {
  readonly dialect = sqliteDialect;
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  /** Transactions waiting for the next batch, by org: a batch takes them in the orgs' rotation, not first come first served. */
  private readonly pending = new OrgFairQueue<PendingTx>();
  private draining = false;
  private readonly checkpointer: Checkpointer | undefined;
  readonly stats: DbStats = { statements: 0, commits: 0 };
  private readonly beginRetryMs: number;
  /** A second connection for reads of committed rows only (WAL gives it the last commit); the writer for ":memory:". */
  private readonly reader: Database.Database | undefined;
  private readonly readerStatements = new Map<string, Database.Statement>();
  /** The last holder of each `exclusive` lock, which the next one waits for. */
  private readonly locks = new Map<string, Promise<unknown>>();
  /**
   * True while an open transaction lets the event loop turn (after a large
   * statement): what other callers ask of the connection meanwhile must not
   * land in it, so reads go to the committed rows and writes queue as a
   * transaction of their own.
   */
  private paused = false;

  constructor(path: string, options: SqliteOptions = {}) {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    this.beginRetryMs = options.beginRetryMs ?? 30_000;
    // Before the first table: a new database gets 1 KiB pages (an existing one keeps its own). A commit writes
    // every page it touched whole to the WAL, and a turn touches a few rows in many tables and indexes: with
    // 4 KiB pages W1 wrote 215 KB a turn for 6 KB of data, with 1 KiB 74 KB, and took 15 % less CPU.
    this.db.pragma(`page_size = ${PAGE_SIZE}`);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma(`synchronous = ${options.synchronous ?? "NORMAL"}`);
    this.db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    this.db.pragma("foreign_keys = OFF");
    this.db.pragma(`cache_size = -${CACHE_KIB}`);
    try {
      migrateSqlite(this.db);
    } catch (err) {
      this.db.close();
      throw err;
    }
    if (path !== ":memory:") {
      this.reader = new Database(path);
      this.reader.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
      this.reader.pragma("query_only = ON");
      this.reader.pragma(`cache_size = -${CACHE_KIB}`);
    }
    if (path !== ":memory:" && options.checkpointInBackground !== false) {
      this.db.pragma("wal_autocheckpoint = 0");
      const restartFrames = options.walRestartFrames ?? DEFAULT_RESTART_FRAMES;
      // When the WAL starts over, its file is cut back to this size instead of keeping its largest.
      const pageSize = this.db.pragma("page_size", { simple: true }) as number;
      this.db.pragma(`journal_size_limit = ${restartFrames * pageSize}`);
      const driver = createRequire(import.meta.url).resolve("better-sqlite3");
      this.checkpointer = new Checkpointer(path, driver, 500, restartFrames, () => {
        // Without the worker, let SQLite checkpoint inside commits again.
        if (this.db.open) this.db.pragma("wal_autocheckpoint = 1000");
      });
    }
  }

  /** A statement prepared once per connection (the writer's, or the reader's with its own cache). */
  private statement(sql: string, on = this.db, cache = this.statements): Database.Statement {
    let stmt = cache.get(sql);
    if (!stmt) {
      stmt = on.prepare(sql);
      cache.set(sql, stmt);
    }
    return stmt;
  }

  /** BEGIN, COMMIT and savepoints as cached statements: four to eight a turn, so not parsed again each time. */
  private control(sql: string): void {
    this.statement(sql).run();
  }

  private readonly direct: Tx = {
    run: (sql, params = []) => {
      this.stats.statements++;
      return Promise.resolve({ changes: this.statement(sql).run(...params).changes });
    },
    get: <R extends Row>(sql: string, params: readonly SqlValue[] = []) => {
      this.stats.statements++;
      return Promise.resolve(this.statement(sql).get(...params) as R | undefined);
    },
    all: <R extends Row>(sql: string, params: readonly SqlValue[] = []) => {
      this.stats.statements++;
      return Promise.resolve(this.statement(sql).all(...params) as R[]);
    },
  };

  /** What a transaction's function writes with: the connection, with a turn of the event loop after each large statement. */
  private readonly inTransaction: Tx = {
    run: async (sql, params = []) => {
      if (charsOf(params) <= LARGE_STATEMENT_CHARS) return this.direct.run(sql, params);
      // Before (what led here, such as parsing the body, was work enough) and after.
      await this.letLoopTurn();
      const result = await this.direct.run(sql, params);
      await this.letLoopTurn();
      return result;
    },
    get: (sql, params) => this.direct.get(sql, params),
    all: (sql, params) => this.direct.all(sql, params),
  };

  private async letLoopTurn(): Promise<void> {
    this.paused = true;
    await new Promise((r) => setImmediate(r));
    this.paused = false;
  }

  /** Reads run at once here, whoever's they are. */
  readsFor(): Reads {
    return this;
  }

  readonly committed: Pick<Tx, "get" | "all"> = {
    get: <R extends Row>(sql: string, params: readonly SqlValue[] = []) => {
      if (!this.reader) return this.direct.get<R>(sql, params);
      this.stats.statements++;
      return Promise.resolve(this.readerStatement(sql).get(...params) as R | undefined);
    },
    all: <R extends Row>(sql: string, params: readonly SqlValue[] = []) => {
      if (!this.reader) return this.direct.all<R>(sql, params);
      this.stats.statements++;
      return Promise.resolve(this.readerStatement(sql).all(...params) as R[]);
    },
  };

  private readerStatement(sql: string): Database.Statement {
    return this.statement(sql, this.reader!, this.readerStatements);
  }

  run(sql: string, params?: readonly SqlValue[]) {
    return this.paused ? this.transaction((tx) => tx.run(sql, params)) : this.direct.run(sql, params);
  }
  get<R extends Row = Row>(sql: string, params?: readonly SqlValue[]) {
    return this.paused ? this.committed.get<R>(sql, params) : this.direct.get<R>(sql, params);
  }
  all<R extends Row = Row>(sql: string, params?: readonly SqlValue[]) {
    return this.paused ? this.committed.all<R>(sql, params) : this.direct.all<R>(sql, params);
  }

  /** One daemon owns a SQLite file (DatabaseLock), so the lock is this process's: a chain per name. */
  exclusive<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const before = this.locks.get(name) ?? Promise.resolve();
    const mine = before.then(fn, fn);
    const tail = mine.catch(() => undefined);
    this.locks.set(name, tail);
    void tail.then(() => {
      if (this.locks.get(name) === tail) this.locks.delete(name);
    });
    return mine;
  }

  /**
   * Group commit: transactions that queue up while one runs share the next
   * physical transaction, each inside its own savepoint, so a failing one
   * rolls back alone while the others commit together with one WAL write.
   * A batch takes the waiting transactions in the orgs' rotation (`org`,
   * OrgFairQueue), so one org's backlog past a batch's size does not stand
   * ahead of another org's transaction.
   */
  transaction<T>(fn: (tx: Tx) => Promise<T>, org = ""): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push(org, { fn: fn as (tx: Tx) => Promise<unknown>, resolve: resolve as (v: unknown) => void, reject });
      if (!this.draining) void this.drain();
    });
  }

  /**
   * BEGIN IMMEDIATE, tried again a moment later while another connection
   * holds the write lock. SQLite does not always wait for it: the checkpoint
   * worker's RESTART holds the lock while it waits for readers, and a BEGIN
   * that meets it can fail at once with SQLITE_BUSY (seen in a W1 run: the
   * process died of "database is locked"). Waiting here lets the event loop
   * run; a batch that still cannot begin fails alone.
   */
  private async begin(): Promise<void> {
    const until = Date.now() + this.beginRetryMs;
    for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
      try {
        this.control("BEGIN IMMEDIATE");
        return;
      } catch (err) {
        if (!String((err as { code?: unknown }).code).startsWith("SQLITE_BUSY") || Date.now() >= until) throw err;
      }
      await new Promise((r) => setTimeout(r, pause));
    }
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.pending.size > 0) {
        const batch: PendingTx[] = [];
        while (batch.length < MAX_GROUP && this.pending.size > 0) batch.push(this.pending.shift()!);
        const settled: (() => void)[] = [];
        try {
          await this.begin();
        } catch (err) {
          // Still locked after the retries: these transactions fail, the ones queued after them are tried.
          for (const item of batch) item.reject(err);
          continue;
        }
        try {
          if (batch.length === 1) {
            // Alone in its batch: the transaction itself is the savepoint.
            const item = batch[0]!;
            try {
              const value = await item.fn(this.inTransaction);
              settled.push(() => item.resolve(value));
            } catch (err) {
              this.db.exec("ROLLBACK");
              item.reject(err);
              continue;
            }
          } else
            for (const item of batch) {
              this.control("SAVEPOINT tx");
              try {
                const value = await item.fn(this.inTransaction);
                this.control("RELEASE tx");
                settled.push(() => item.resolve(value));
              } catch (err) {
                this.db.exec("ROLLBACK TO tx");
                this.control("RELEASE tx");
                settled.push(() => item.reject(err));
              }
            }
          this.control("COMMIT");
          this.stats.commits++;
        } catch (err) {
          // The commit itself failed (disk full, I/O error): nothing of the batch is durable.
          if (this.db.inTransaction) this.db.exec("ROLLBACK");
          for (const item of batch) item.reject(err);
          continue;
        }
        for (const s of settled) s();
        // A wave of transactions (a thousand messages at once) would otherwise hold the event loop until the
        // last commits: between physical commits, let timers and sockets run (what queues meanwhile joins the
        // next batch). A lone transaction never waits here.
        if (this.pending.size > 0) await new Promise((r) => setImmediate(r));
      }
    } finally {
      this.draining = false;
    }
  }

  async close(): Promise<void> {
    while (this.draining || this.pending.size > 0) await new Promise((r) => setImmediate(r));
    await this.checkpointer?.close();
    if (this.reader?.open) this.reader.close();
    if (this.db.open) this.db.close();
  }
}

/** How many characters the string parameters of a statement hold. */
function charsOf(params: readonly SqlValue[]): number {
  let n = 0;
  for (const p of params) if (typeof p === "string") n += p.length;
  return n;
}
