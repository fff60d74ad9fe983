import { createHash } from "node:crypto";
import type pg from "pg";
import { FairCheckout } from "./fair-checkout.js";
import { loadPg } from "./load-pg.js";
import type { Db, DbStats, Reads, Row, SqlValue, Tx } from "./db.js";
import { migratePostgres, type Migration, type MigrationResult } from "./migrate.js";
import { PostgresListener, type ListenOptions, type StoreLog, type Unsubscribe } from "./postgres-listener.js";
import { postgresDialect } from "./postgres-dialect.js";

export interface PostgresOptions {
  /** Connections in the pool (default 10); each running transaction holds one, handed out fairly between orgs (FairCheckout). */
  poolSize?: number;
  /** Where warnings go (a lost idle connection, a LISTEN reconnect). Default: stderr. */
  log?: StoreLog;
  /** The name PostgreSQL shows for these sessions in pg_stat_activity (default "wardrik"). */
  applicationName?: string;
  /**
   * Milliseconds a session may sit idle inside a transaction before the
   * server ends it (PostgreSQL's idle_in_transaction_session_timeout), so a
   * process frozen mid-transaction (SIGSTOP, a stalled VM) does not hold its
   * row locks until it thaws. Unset or 0: the server's own setting.
   */
  idleInTransactionMs?: number;
}

const asText = (text: string): string => text;

let types: pg.CustomTypesConfig | undefined;

/**
 * Row values are `SqlValue` in both dialects, so PostgreSQL's text results are
 * parsed the way SQLite would answer. Set on this adapter's pool only (never on
 * pg's global parsers, which other code in the process may rely on).
 */
function rowTypes(): pg.CustomTypesConfig {
  if (types) return types;
  const pgTypes = loadPg().types;
  const { builtins } = pgTypes;
  const parsers = new Map<number, (text: string) => SqlValue>([
    // BIGINT columns and COUNT(*); Wardrik's integers (sequence numbers, micro-dollars) stay below 2^53.
    [builtins.INT8, Number],
    // SUM() of a BIGINT and AVG() answer NUMERIC.
    [builtins.NUMERIC, Number],
    // A comparison in a select list: 1/0 like SQLite, since booleans are stored as INTEGER 0/1.
    [builtins.BOOL, (text) => (text === "t" ? 1 : 0)],
    // Times and JSON are stored as TEXT; should an expression produce one, it stays text.
    [builtins.DATE, asText],
    [builtins.TIMESTAMP, asText],
    [builtins.TIMESTAMPTZ, asText],
    [builtins.JSON, asText],
    [builtins.JSONB, asText],
  ]);
  return (types = {
    getTypeParser: ((oid: number, format?: "text" | "binary") =>
      (format !== "binary" && parsers.get(oid)) || pgTypes.getTypeParser(oid, format)) as pg.CustomTypesConfig["getTypeParser"],
  });
}

const MAX_CACHED = 5000;
const translated = new Map<string, string>();

/** `?` -> `$n`, once per SQL string. */
function pgSql(sql: string): string {
  let text = translated.get(sql);
  if (text === undefined) {
    text = postgresDialect.statement(sql);
    // The store's SQL is a fixed set; should something build SQL dynamically, the cache starts over instead of growing.
    if (translated.size >= MAX_CACHED) translated.clear();
    translated.set(sql, text);
  }
  return text;
}

const stderrLog: StoreLog = (level, msg, fields) => {
  process.stderr.write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }) + "\n");
};

/**
 * PostgreSQL adapter on a `pg` pool.
 *
 * Unlike SQLite's, transactions here run concurrently, each on its own pooled
 * connection, at READ COMMITTED: two transactions can both read a row before
 * either writes it. Queries that allocate (a next sequence number) or claim
 * (a status change) must be safe under that: update-then-check `changes`, or
 * lock the row they derive from (`UPDATE ... RETURNING`, `SELECT ... FOR UPDATE`).
 */
export class PostgresDb implements Db {
  /** A plain read here takes a pool connection outside any transaction: committed rows only. */
  get committed(): Pick<Tx, "get" | "all"> {
    return this;
  }
  readonly dialect = postgresDialect;
  private readonly pool: pg.Pool;
  /** Every use of the pool takes a place here first, so orgs get connections in turn, not first come first served. */
  private readonly checkout: FairCheckout;
  private readonly listener: PostgresListener;
  private closing: Promise<void> | undefined;
  private readonly connections = new Set<Promise<void>>();
  readonly stats: DbStats = { statements: 0, commits: 0 };
  /** How often a held `exclusive` lock's session speaks: well within the idle-in-transaction timeout. */
  private readonly lockKeepAliveMs: number;

  constructor(url: string, options: PostgresOptions = {}) {
    const log = options.log ?? stderrLog;
    const config: pg.ClientConfig = {
      connectionString: url,
      types: rowTypes(),
      application_name: options.applicationName ?? "wardrik",
      keepAlive: true,
      connectionTimeoutMillis: 30_000,
      ...(options.idleInTransactionMs ? { idle_in_transaction_session_timeout: Math.ceil(options.idleInTransactionMs) } : {}),
    };
    const poolSize = options.poolSize ?? 10;
    this.pool = new (loadPg().Pool)({ ...config, max: poolSize });
    this.checkout = new FairCheckout(poolSize);
    this.lockKeepAliveMs = Math.max(50, Math.floor((options.idleInTransactionMs || 3000) / 3));
    // An idle connection that fails (server restart, network) is dropped by the pool; without a listener it would crash the process.
    this.pool.on("error", (err) => {
      if (!this.closing) log("warn", "An idle PostgreSQL connection failed; the pool will open a new one", { error: err.message });
    });
    // pool.end() resolves once it has asked its connections to end, not when they have: close() waits for each.
    this.pool.on("connect", (client) => {
      const ended = new Promise<void>((resolve) => client.once("end", () => resolve()));
      this.connections.add(ended);
      void ended.then(() => this.connections.delete(ended));
    });
    this.listener = new PostgresListener({ ...config, application_name: `${config.application_name} listen` }, log);
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<{ changes: number }> {
    const r = await this.query(sql, params);
    return { changes: r.rowCount ?? 0 };
  }

  async get<R extends Row = Row>(sql: string, params: readonly SqlValue[] = []): Promise<R | undefined> {
    return (await this.query<R>(sql, params)).rows[0];
  }

  async all<R extends Row = Row>(sql: string, params: readonly SqlValue[] = []): Promise<R[]> {
    return (await this.query<R>(sql, params)).rows;
  }

  /** The reads of each org that asked for its own (readsFor). */
  private readonly readers = new Map<string, Reads>();

  readsFor(org: string): Reads {
    let reads = this.readers.get(org);
    if (!reads)
      this.readers.set(
        org,
        (reads = {
          get: async <R extends Row = Row>(sql: string, params: readonly SqlValue[] = []) =>
            (await this.query<R>(sql, params, org)).rows[0],
          all: async <R extends Row = Row>(sql: string, params: readonly SqlValue[] = []) => (await this.query<R>(sql, params, org)).rows,
        }),
      );
    return reads;
  }

  /** A statement on a pooled connection of its own; reads that name no org (readsFor) share one place in the rotation. */
  private async query<R extends Row>(sql: string, params: readonly SqlValue[], org = UNNAMED_ORG): Promise<pg.QueryResult<R>> {
    this.stats.statements++;
    const wait = this.checkout.take(org);
    if (wait) await wait;
    try {
      return await this.pool.query<R>(pgSql(sql), params as SqlValue[]);
    } finally {
      this.checkout.give();
    }
  }

  /**
   * BEGIN ... COMMIT on one pooled connection, which only `fn`'s statements
   * use until the end. `org`: whose work it is; while the pool's connections
   * are all taken, orgs get the next one in turn (FairCheckout).
   */
  transaction<T>(fn: (tx: Tx) => Promise<T>, org = UNNAMED_ORG): Promise<T> {
    return this.withSession(org, async (client, brokenBy) => {
      const tx = new SessionTx(client, this.stats);
      try {
        await client.query("BEGIN");
        const value = await fn(tx);
        await client.query("COMMIT");
        this.stats.commits++;
        return value;
      } catch (err) {
        const broken = brokenBy();
        // After a failed COMMIT the server has ended the transaction already; ROLLBACK then only warns.
        if (!broken) await client.query("ROLLBACK").catch(() => undefined);
        // The server ended the session because it sat idle in this transaction (the process was frozen): nothing of
        // it committed, and it may run again on another connection. The statement that failed may only say that the
        // connection is gone: the server's reason came on the connection's 'error' event.
        if (sqlState(err) !== IDLE_IN_TRANSACTION_ENDED && sqlState(broken) === IDLE_IN_TRANSACTION_ENDED)
          throw Object.assign(new Error(`The transaction was rolled back: ${broken!.message}`, { cause: err }), {
            code: IDLE_IN_TRANSACTION_ENDED,
          });
        throw err;
      } finally {
        tx.end();
      }
    });
  }

  /**
   * An advisory lock held by a transaction on a connection of its own while
   * `fn` runs on others; the server releases it should this process die.
   * While `fn` runs, the lock's session says a word every third of
   * `idleInTransactionMs`, so the server's idle_in_transaction_session_timeout
   * ends it only for a holder that cannot speak: one frozen (SIGSTOP) past
   * that time loses the lock, and the next holder goes on while it is still
   * frozen. Thawed, such a holder finishes `fn` beside the next one: what runs
   * under this lock must stand being done twice (the agents sync does: each
   * write checks what is there).
   */
  exclusive<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const key = advisoryKey(name);
    return this.withSession(UNNAMED_ORG, async (client, brokenBy, discard) => {
      await client.query("BEGIN");
      try {
        await client.query("SELECT pg_advisory_xact_lock($1::bigint)", [key]);
      } catch (err) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw err;
      }
      let speaking: Promise<void> = Promise.resolve();
      const keepAlive = setInterval(() => {
        if (brokenBy()) return;
        speaking = client.query("SELECT 1").then(
          () => undefined,
          (err: unknown) => discard(err as Error),
        );
      }, this.lockKeepAliveMs);
      try {
        return await fn();
      } finally {
        clearInterval(keepAlive);
        await speaking;
        // Ending the transaction releases the lock; a connection whose end failed is closed instead (that releases it too).
        if (!brokenBy()) await client.query("COMMIT").catch((err: unknown) => discard(err as Error));
      }
    });
  }

  /** Applies the pending migrations (see migrate.ts); `openDb` calls this before handing the database out. */
  migrate(migrations?: readonly Migration[]): Promise<MigrationResult> {
    return this.withSession(UNNAMED_ORG, (client) => migratePostgres(client, migrations));
  }

  /**
   * Calls `onPayload` with the payload of every NOTIFY on `channel`, from any
   * session on this database, once the notifying transaction commits.
   */
  listen(channel: string, onPayload: (payload: string) => void, options?: ListenOptions): Promise<Unsubscribe> {
    return this.listener.listen(channel, onPayload, options);
  }

  /** Queues a notification inside `tx`: listeners get it when `tx` commits, never if it rolls back. */
  async notify(tx: Tx, channel: string, payload: string): Promise<void> {
    await tx.get("SELECT pg_notify(?, ?)", [channel, payload]);
  }

  /** Waits for running transactions, then closes every connection. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.listener.close();
      await this.pool.end();
      await Promise.all(this.connections);
    })();
    return this.closing;
  }

  /**
   * Runs `fn` on a connection of its own. A connection that failed on the way
   * (the server ended it, the network broke), or that `fn` discards, is
   * destroyed, never returned to the pool for the next caller.
   */
  private async withSession<T>(
    org: string,
    fn: (client: pg.PoolClient, brokenBy: () => Error | undefined, discard: (why: Error) => void) => Promise<T>,
  ): Promise<T> {
    const wait = this.checkout.take(org);
    if (wait) await wait;
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      this.checkout.give();
      throw err;
    }
    let broken: Error | undefined;
    // A checked-out client has no pool listener: an unheard 'error' would crash the process.
    const onError = (err: Error) => (broken ??= err);
    client.on("error", onError);
    try {
      return await fn(
        client,
        () => broken,
        (why) => (broken ??= why),
      );
    } catch (err) {
      if (isConnectionError(err)) broken ??= err as Error;
      throw err;
    } finally {
      client.off("error", onError);
      client.release(broken ?? false);
      this.checkout.give();
    }
  }
}

/** The org of work no org is named for (plain reads, locks, migrations): one more place in the rotation. */
const UNNAMED_ORG = "";

/** A lock name as the 64-bit key PostgreSQL's advisory locks take: the first 8 bytes of its SHA-256. */
function advisoryKey(name: string): string {
  return createHash("sha256").update(`wardrik:${name}`).digest().readBigInt64BE(0).toString();
}

/**
 * A statement error that means the session is finished: class 08 (connection
 * exception), 57P (the server is shutting down or ended this backend) or
 * 25P03 (the session sat idle in a transaction too long, and was ended). A
 * dead socket is also reported on the client's 'error' event, but only a
 * moment later; this catches it before the connection could go back to the pool.
 */
function isConnectionError(err: unknown): boolean {
  const code = sqlState(err);
  return code !== undefined && (code.startsWith("08") || code.startsWith("57P") || code === IDLE_IN_TRANSACTION_ENDED);
}

/** PostgreSQL's idle_in_transaction_session_timeout: the server ended a session idle inside a transaction. */
export const IDLE_IN_TRANSACTION_ENDED = "25P03";

function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}

/** The `Tx` of one transaction: bound to its connection, and unusable once the transaction ended. */
class SessionTx implements Tx {
  private open = true;
  constructor(
    private readonly client: pg.PoolClient,
    private readonly stats: DbStats,
  ) {}

  end(): void {
    this.open = false;
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<{ changes: number }> {
    const r = await this.client.query(this.text(sql), params as SqlValue[]);
    return { changes: r.rowCount ?? 0 };
  }

  async get<R extends Row = Row>(sql: string, params: readonly SqlValue[] = []): Promise<R | undefined> {
    return (await this.client.query<R>(this.text(sql), params as SqlValue[])).rows[0];
  }

  async all<R extends Row = Row>(sql: string, params: readonly SqlValue[] = []): Promise<R[]> {
    return (await this.client.query<R>(this.text(sql), params as SqlValue[])).rows;
  }

  private text(sql: string): string {
    this.stats.statements++;
    // The connection now belongs to someone else: a late statement must not run in their transaction.
    if (!this.open) throw new Error("This transaction has ended: a statement ran after its transaction() callback returned.");
    return pgSql(sql);
  }
}
