import { join } from "node:path";
import { WardrikError } from "@wardrik/protocol/errors";
import { DatabaseLock } from "../store/database-lock.js";
import { SecretStore } from "../store/secrets.js";
import { openDb, type OpenedDb } from "../store/open-db.js";
import { SqliteDb } from "../store/sqlite-db.js";
import { readProjectSettings, type ProjectSettings } from "./project-settings.js";

/** A mistake elsewhere in config.yaml was already shown when the command looked for the daemon (connect.ts). */
const quiet = (): void => {};

/** The project's database, opened by the CLI itself while no daemon runs. */
export interface OfflineStore {
  org: string;
  /** Where the database is, for messages. */
  database: string;
  secrets: SecretStore;
  close(): Promise<void>;
}

/**
 * Opens the database of the project in `dir` directly, for the commands that
 * must work while the daemon is stopped (`wardrik secret set`: the daemon may
 * refuse to start until a secret exists). It takes the daemon's database lock
 * for as long as it is open: a daemon started meanwhile is refused, and a
 * daemon that holds the database but did not answer is named, not raced.
 */
export async function openOfflineStore(dir: string, settings: ProjectSettings = readProjectSettings(dir, quiet)): Promise<OfflineStore> {
  if (!settings.database.startsWith("sqlite:")) return openOfflinePostgres(dir, settings);
  const path = settings.database.slice("sqlite:".length);
  let lock: DatabaseLock;
  try {
    lock = DatabaseLock.acquire(path);
  } catch (e) {
    throw new WardrikError("unavailable", `No daemon answered, and the database cannot be opened: ${(e as Error).message}`);
  }
  let db: SqliteDb | undefined;
  try {
    // No background checkpointer: the CLI's few writes are checkpointed by the daemon later.
    db = new SqliteDb(path, { checkpointInBackground: false });
    const secrets = new SecretStore(db, join(dir, ".wardrik", "secret-key"));
    const opened = db;
    return {
      org: settings.org,
      database: path,
      secrets,
      close: async () => {
        await opened.close();
        lock.release();
      },
    };
  } catch (e) {
    await db?.close();
    lock.release();
    throw e;
  }
}

/**
 * PostgreSQL is made for several processes at once (a cluster's daemons
 * share it), so the CLI simply connects; there is no lock to take.
 */
async function openOfflinePostgres(dir: string, settings: ProjectSettings): Promise<OfflineStore> {
  let db: OpenedDb;
  try {
    db = await openDb(settings.database);
  } catch (e) {
    throw new WardrikError("unavailable", `No daemon answered, and the database cannot be opened: ${(e as Error).message}`);
  }
  const url = new URL(settings.database);
  return {
    org: settings.org,
    // Never the password.
    database: `${url.protocol}//${url.host}${url.pathname}`,
    secrets: new SecretStore(db, join(dir, ".wardrik", "secret-key")),
    close: () => db.close(),
  };
}
