import type { Db, Tx } from "./db.js";

/** The answer a request with an `Idempotency-Key` got, replayed to every retry with that key. */
export interface StoredAnswer {
  status: number;
  body: string;
  contentType: string;
}

/**
 * One key's record. `pending` means a request with the key is being served
 * (by the daemon process `owner`); `done` holds the answer it got.
 */
export type IdempotencyRecord =
  { state: "pending"; fingerprint: string; owner: string } | { state: "done"; fingerprint: string; owner: string; answer: StoredAnswer };

export type ClaimResult = { claimed: true } | { claimed: false; record: IdempotencyRecord };

const pendingOf = (fingerprint: string, owner: string): string =>
  JSON.stringify({ state: "pending", fingerprint, owner } satisfies IdempotencyRecord);

/** Keys are kept this long; a key older than that counts as never seen. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * `Idempotency-Key`s of HTTP requests, in the `idempotency` table of
 * 001_init.sql: `scope` is org + method + path, `result` holds the record as
 * JSON. A key is claimed by inserting its row before the work starts, so of
 * two identical requests at once only one does the work.
 */
export class IdempotencyKeys {
  constructor(private readonly db: Db) {}

  /**
   * Claims `key` for a new request, or returns the record that holds it. An
   * expired record is taken over in the same statement.
   */
  async claim(scope: string, key: string, fingerprint: string, owner: string, now: Date): Promise<ClaimResult> {
    const pending = pendingOf(fingerprint, owner);
    const at = now.toISOString();
    const expired = new Date(now.getTime() - IDEMPOTENCY_TTL_MS).toISOString();
    const claimed = await this.db.transaction(async (tx) => {
      const inserted = await tx.run(
        "INSERT INTO idempotency (scope, key, result, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (scope, key) DO NOTHING",
        [scope, key, pending, at],
      );
      if (inserted.changes > 0) return true;
      const renewed = await tx.run("UPDATE idempotency SET result = ?, created_at = ? WHERE scope = ? AND key = ? AND created_at < ?", [
        pending,
        at,
        scope,
        key,
        expired,
      ]);
      return renewed.changes > 0;
    });
    if (claimed) return { claimed: true };
    const row = await this.db.get<{ result: string }>("SELECT result FROM idempotency WHERE scope = ? AND key = ?", [scope, key]);
    // Deleted between the two statements (released by a failed request): claim again.
    if (!row) return this.claim(scope, key, fingerprint, owner, now);
    return { claimed: false, record: JSON.parse(row.result) as IdempotencyRecord };
  }

  /** Whether `key` has a record (of any age): a read, no write. */
  async exists(scope: string, key: string): Promise<boolean> {
    return (await this.db.get("SELECT 1 AS found FROM idempotency WHERE scope = ? AND key = ?", [scope, key])) !== undefined;
  }

  /**
   * Records a key that had no record with its answer at once (no pending
   * state), in `tx`, the transaction that does the request's work where there
   * is one. False when another request recorded the key first: then `tx` must
   * not commit.
   */
  async insertAnswer(
    scope: string,
    key: string,
    fingerprint: string,
    owner: string,
    answer: StoredAnswer,
    now: Date,
    tx?: Tx,
  ): Promise<boolean> {
    const record: IdempotencyRecord = { state: "done", fingerprint, owner, answer };
    const insert = (t: Tx) =>
      t.run("INSERT INTO idempotency (scope, key, result, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (scope, key) DO NOTHING", [
        scope,
        key,
        JSON.stringify(record),
        now.toISOString(),
      ]);
    return (await (tx ? insert(tx) : this.db.transaction(insert))).changes > 0;
  }

  /**
   * Takes a key that another owner left pending, for a route whose answer
   * commits with its work (so that owner's work never committed, or will
   * now fail to: see `complete`). False when the record changed meanwhile.
   */
  async takeOver(scope: string, key: string, from: IdempotencyRecord & { state: "pending" }, owner: string): Promise<boolean> {
    const r = await this.db.transaction((tx) =>
      tx.run("UPDATE idempotency SET result = ? WHERE scope = ? AND key = ? AND result = ?", [
        pendingOf(from.fingerprint, owner),
        scope,
        key,
        pendingOf(from.fingerprint, from.owner),
      ]),
    );
    return r.changes > 0;
  }

  /**
   * Stores the answer of a key `owner` holds. Pass the transaction that does
   * the request's work (`tx`) where there is one, so the work and its answer
   * commit together. False when `owner` no longer holds the key (another
   * attempt took it over): then `tx` must not commit.
   */
  async complete(scope: string, key: string, fingerprint: string, owner: string, answer: StoredAnswer, tx?: Tx): Promise<boolean> {
    const record: IdempotencyRecord = { state: "done", fingerprint, owner, answer };
    const write = (t: Tx) =>
      t.run("UPDATE idempotency SET result = ? WHERE scope = ? AND key = ? AND result = ?", [
        JSON.stringify(record),
        scope,
        key,
        pendingOf(fingerprint, owner),
      ]);
    return (await (tx ? write(tx) : this.db.transaction(write))).changes > 0;
  }

  /** Gives up a key `owner` holds (the request failed in a way a retry may fix): the next request with it runs anew. */
  async release(scope: string, key: string, fingerprint: string, owner: string): Promise<void> {
    await this.db.transaction((tx) =>
      tx.run("DELETE FROM idempotency WHERE scope = ? AND key = ? AND result = ?", [scope, key, pendingOf(fingerprint, owner)]),
    );
  }

  /** Deletes keys past their time. */
  async purge(now: Date): Promise<number> {
    const expired = new Date(now.getTime() - IDEMPOTENCY_TTL_MS).toISOString();
    const r = await this.db.transaction((tx) => tx.run("DELETE FROM idempotency WHERE created_at < ?", [expired]));
    return r.changes;
  }
}
