import { join } from "node:path";
import { loadConfig } from "../config/index.js";
import { McpGrantStore } from "../store/mcp-grants.js";
import { SecretStore, type RotationResult } from "../store/secrets.js";
import { openDb } from "../store/open-db.js";
import { newKey, readKeyFile, SECRET_KEY_ENV, writeKeyFile, type SecretKey } from "./key-ring.js";

export const KEY_FILE = join(".wardrik", "secret-key");

export interface RotateKeyResult {
  /** The key every secret is encrypted with now. */
  keyId: string;
  /** Where that key lives: WARDRIK_SECRET_KEY, or the key file. */
  source: string;
  /** Secrets re-encrypted. */
  rotated: number;
  /** Key IDs taken out of the key file (they decrypt nothing any more). */
  retired: string[];
  /** Secrets no key could decrypt; while there are any, the old keys stay in the key file. */
  failed: RotationResult["failed"];
}

/**
 * `wardrik secret rotate-key`: re-encrypts every secret of the project's
 * database under a new key.
 *
 * With the key file: a new key goes first in the file, with the old ones
 * kept after it so that everything stays readable (a running daemon rereads
 * the file and encrypts new secrets with the new key at once); every secret
 * is re-encrypted; then the old keys are removed. With WARDRIK_SECRET_KEY
 * set, that variable holds the new key (an operator sets it, and the old one
 * in WARDRIK_SECRET_KEY_PREVIOUS, on every daemon first); every secret is
 * re-encrypted under it, and removing the old keys is left to the operator.
 */
export async function rotateSecretKey(dir: string, env: NodeJS.ProcessEnv = process.env): Promise<RotateKeyResult> {
  const database = projectDatabase(dir, env);
  const keyPath = join(dir, KEY_FILE);
  const fromEnv = (env[SECRET_KEY_ENV] ?? "").trim() !== "";
  const oldKeys = readKeyFile(keyPath);
  let fresh: SecretKey | undefined;
  if (!fromEnv) {
    fresh = newKey();
    writeKeyFile(keyPath, [fresh, ...oldKeys]);
  }
  const db = await openDb(database);
  try {
    const store = new SecretStore(db, keyPath, { env });
    // MCP OAuth grants are sealed with the same keys: they move with the secrets.
    const grants = new McpGrantStore(db, store);
    const left = async () => (await store.notUnderCurrentKey()) + (await grants.notUnderCurrentKey());
    let rotated = 0;
    let failed: RotationResult["failed"] = [];
    // A `secret set` racing a pass writes with the new key already; a few passes settle the rest.
    for (let pass = 0; pass < 3; pass++) {
      const r = await store.rotate();
      const g = await grants.rotate();
      rotated += r.rotated + g.rotated;
      failed = [...r.failed, ...g.failed];
      if (failed.length > 0 || (await left()) === 0) break;
    }
    const result: RotateKeyResult = { keyId: store.currentKeyId, source: fromEnv ? SECRET_KEY_ENV : keyPath, rotated, retired: [], failed };
    if (fresh && failed.length === 0 && (await left()) === 0) {
      writeKeyFile(keyPath, [fresh]);
      // A daemon that read the key file just before it changed may have stored a secret with an old key since.
      if ((await left()) > 0) {
        writeKeyFile(keyPath, [fresh, ...oldKeys]);
        throw new Error(
          "a secret was stored with the old key while the rotation ran; every key is kept, run wardrik secret rotate-key again",
        );
      }
      result.retired = oldKeys.map((k) => k.id);
    }
    return result;
  } finally {
    await db.close();
  }
}

/** The project's database URL, from config.yaml (secrets cannot be used there: they live in the database). */
function projectDatabase(dir: string, env: NodeJS.ProcessEnv): string {
  return loadConfig(dir, { env, secret: () => "unused" }).database;
}
