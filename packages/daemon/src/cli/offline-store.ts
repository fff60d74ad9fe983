import { join } from "node:path";
import { WardrikError } from "@wardrik/protocol";
import { SecretStore } from "../store/secrets.js";
import { SqliteDb } from "../store/sqlite-db.js";
import { err } from "./output.js";
import { readProjectSettings, type ProjectSettings } from "./project-settings.js";

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
 * refuse to start until a secret exists). This is the one place the CLI opens
 * the database, so the lock that keeps two processes from owning it belongs here.
 */
export async function openOfflineStore(dir: string, settings: ProjectSettings = readProjectSettings(dir, err)): Promise<OfflineStore> {
  if (!settings.database.startsWith("sqlite:")) {
    throw new WardrikError(
      "unavailable",
      "The daemon does not answer, and only a SQLite database can be opened without it; start the daemon (wardrik daemon) and try again.",
    );
  }
  const path = settings.database.slice("sqlite:".length);
  // No background checkpointer: the CLI's few writes are checkpointed by the daemon later.
  const db = new SqliteDb(path, { checkpointInBackground: false });
  let secrets: SecretStore;
  try {
    secrets = new SecretStore(db, join(dir, ".wardrik", "secret-key"));
  } catch (e) {
    await db.close();
    throw e;
  }
  return { org: settings.org, database: path, secrets, close: () => db.close() };
}
