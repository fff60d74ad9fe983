import { createHash, randomUUID } from "node:crypto";
import { mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { syncDir } from "./sync-dir.js";

/** A remembered result. Present means "already done", whatever `value` is. */
export interface IdempotencyRecord {
  value: unknown;
}

/** Where results are remembered. Implement it over Redis or a database to share it between machines. */
export interface IdempotencyStore {
  get(key: string): Promise<IdempotencyRecord | undefined> | IdempotencyRecord | undefined;
  set(key: string, record: IdempotencyRecord): Promise<void> | void;
}

/** Runs `fn` once per key; a repeat returns the remembered result instead of running it again. */
export type Remember = <T>(key: string, fn: () => T | Promise<T>) => Promise<T>;

export const DEFAULT_IDEMPOTENCY_DIR = join(".wardrik", "idempotency");

/**
 * One JSON file per key (named by the key's SHA-256), written to a temporary
 * file, synced and renamed into place, so a crash never leaves half a record.
 */
export class FileIdempotencyStore implements IdempotencyStore {
  readonly dir: string;

  constructor(dir: string = resolve(process.cwd(), DEFAULT_IDEMPOTENCY_DIR)) {
    this.dir = resolve(dir);
  }

  async get(key: string): Promise<IdempotencyRecord | undefined> {
    let text: string;
    try {
      text = await readFile(this.file(key), "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
    // A record that cannot be read must not look like "never ran": that would repeat the effect.
    let parsed: { key?: unknown; value?: unknown };
    try {
      parsed = JSON.parse(text) as { key?: unknown; value?: unknown };
    } catch {
      throw new Error(`The idempotency record for key "${key}" in ${this.dir} is corrupt; inspect or delete ${this.file(key)}.`);
    }
    return parsed.key === key ? { value: parsed.value } : undefined;
  }

  async set(key: string, record: IdempotencyRecord): Promise<void> {
    let text: string;
    try {
      text = JSON.stringify({ key, value: record.value, storedAt: new Date().toISOString() });
    } catch (err) {
      throw new Error(`The result for idempotency key "${key}" cannot be stored as JSON: ${(err as Error).message}`);
    }
    await mkdir(this.dir, { recursive: true });
    const target = this.file(key);
    const temp = `${target}.${process.pid}.${randomUUID()}.tmp`;
    const handle = await open(temp, "w");
    try {
      await handle.writeFile(text, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(temp, target);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    await syncDir(this.dir);
  }

  private file(key: string): string {
    return join(this.dir, createHash("sha256").update(key).digest("hex") + ".json");
  }
}

/** Keeps results in memory: for tests, or results that need not survive a restart. */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly records = new Map<string, IdempotencyRecord>();

  get(key: string): IdempotencyRecord | undefined {
    return this.records.get(key);
  }

  set(key: string, record: IdempotencyRecord): void {
    this.records.set(key, record);
  }
}

// Concurrent attempts with one key in this process share one run; shared per store.
const runningByStore = new WeakMap<IdempotencyStore, Map<string, Promise<unknown>>>();

/**
 * For APIs without idempotency keys: `remember(ctx.idempotencyKey, () => api.charge(...))`
 * runs the function once per key and returns its remembered result on a repeat.
 * Only a successful result is remembered; a thrown error lets the next attempt try again.
 * Two processes that share a store can both run a key they see at the same moment;
 * a store that needs to prevent that must lock in `get`/`set`.
 */
export function withIdempotency(store: IdempotencyStore = defaultStore()): Remember {
  let running = runningByStore.get(store);
  if (!running) {
    running = new Map();
    runningByStore.set(store, running);
  }
  const inFlight = running;
  return <T>(key: string, fn: () => T | Promise<T>): Promise<T> => {
    const existing = inFlight.get(key);
    if (existing) return existing as Promise<T>;
    const attempt = (async () => {
      const record = await store.get(key);
      if (record) return record.value as T;
      const value = await fn();
      await store.set(key, { value });
      return value;
    })();
    inFlight.set(key, attempt);
    const forget = (): void => {
      inFlight.delete(key);
    };
    attempt.then(forget, forget);
    return attempt;
  };
}

let defaultFileStore: FileIdempotencyStore | undefined;

function defaultStore(): FileIdempotencyStore {
  defaultFileStore ??= new FileIdempotencyStore();
  return defaultFileStore;
}

/** `withIdempotency()` over the default store: `.wardrik/idempotency` under the working directory. */
export const remember: Remember = (key, fn) => withIdempotency()(key, fn);
