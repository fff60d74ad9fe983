import Database from "better-sqlite3";
import { existsSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { basename, dirname, join, resolve } from "node:path";

/** Who holds a database, as the holder wrote it next to the lock. */
export interface LockHolder {
  pid: number;
  host: string;
  url?: string;
  since: string;
}

/**
 * One daemon per SQLite database. The lock is an exclusive transaction held
 * open on a small side file (`wardrik.db.lock`): the operating system drops it
 * when the holder exits in any way, kill -9 included, so a stale lock never
 * needs cleaning up. Who holds it is written beside it (`wardrik.db.holder`)
 * for the refusal message. Both sit beside the database's real path, so a
 * symlink to the file or to a folder on its way leads to the same lock.
 */
export class DatabaseLock {
  private constructor(
    private readonly db: Database.Database,
    private readonly holderPath: string,
  ) {}

  /** Takes the lock of the database at `dbPath`, or throws saying which process and address hold it. */
  static acquire(dbPath: string): DatabaseLock {
    const real = realDatabasePath(dbPath);
    const lockPath = `${real}.lock`;
    const holderPath = `${real}.holder`;
    const db = new Database(lockPath, { timeout: 0 });
    try {
      db.pragma("locking_mode = EXCLUSIVE");
      db.exec("BEGIN EXCLUSIVE");
    } catch (err) {
      db.close();
      if ((err as { code?: string }).code !== "SQLITE_BUSY") throw err;
      const named = real === resolve(dbPath) ? dbPath : `${dbPath} (which is ${real})`;
      throw new Error(`${refusal(named, readHolder(holderPath))} Stop it first, or give this project another database in config.yaml.`);
    }
    const lock = new DatabaseLock(db, holderPath);
    lock.describe({});
    return lock;
  }

  /** Records who holds the lock (called again once the daemon listens, with its address). */
  describe(extra: { url?: string }): void {
    const holder: LockHolder = { pid: process.pid, host: hostname(), ...extra, since: new Date().toISOString() };
    writeFileSync(this.holderPath, JSON.stringify(holder) + "\n");
  }

  release(): void {
    if (!this.db.open) return;
    rmSync(this.holderPath, { force: true });
    this.db.close();
  }
}

/**
 * Where the database file really is, symlinks resolved: the file's own real
 * path, or its folder's with the file's name when it does not exist yet.
 */
export function realDatabasePath(dbPath: string): string {
  try {
    return realpathSync(dbPath);
  } catch {
    try {
      return join(realpathSync(dirname(dbPath)), basename(dbPath));
    } catch {
      return resolve(dbPath);
    }
  }
}

function readHolder(path: string): LockHolder | undefined {
  try {
    return existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as LockHolder) : undefined;
  } catch {
    return undefined;
  }
}

function refusal(dbPath: string, holder: LockHolder | undefined): string {
  if (!holder) return `Another Wardrik daemon is using ${dbPath}.`;
  const where = holder.url ? ` at ${holder.url}` : "";
  const host = holder.host !== hostname() ? ` on ${holder.host}` : "";
  return `Another Wardrik daemon (pid ${holder.pid}${host}${where}, since ${holder.since}) is using ${dbPath}.`;
}
