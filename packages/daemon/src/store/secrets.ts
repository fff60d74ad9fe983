import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Db } from "./db.js";

/**
 * `${secret:NAME}` values, encrypted at rest (AES-256-GCM) with a key kept
 * beside the database in .wardrik/secret-key (owner-only). The database alone
 * does not reveal them.
 */
export class SecretStore {
  private readonly key: Buffer;

  constructor(
    private readonly db: Db,
    keyPath: string,
  ) {
    this.key = loadKey(keyPath);
  }

  async set(org: string, name: string, value: string): Promise<void> {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const body = Buffer.concat([cipher.update(value, "utf8"), cipher.final()]);
    const sealed = [iv, cipher.getAuthTag(), body].map((b) => b.toString("base64")).join(".");
    await this.db.transaction((tx) =>
      tx.run(
        "INSERT INTO secrets (org, name, ciphertext, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (org, name) DO UPDATE SET ciphertext = excluded.ciphertext, updated_at = excluded.updated_at",
        [org, name, sealed, new Date().toISOString()],
      ),
    );
  }

  async get(org: string, name: string): Promise<string | undefined> {
    const row = await this.db.get<{ ciphertext: string }>("SELECT ciphertext FROM secrets WHERE org = ? AND name = ?", [org, name]);
    if (!row) return undefined;
    const [iv, tag, body] = row.ciphertext.split(".").map((p) => Buffer.from(p, "base64"));
    if (!iv || !tag || !body) throw new Error(`secret ${name} is stored in a form this version cannot read`);
    const decipher = createDecipheriv("aes-256-gcm", this.key, iv);
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
    } catch {
      throw new Error(`secret ${name} cannot be decrypted: .wardrik/secret-key is not the key it was stored with`);
    }
  }

  /** All of an org's secrets, decrypted, for resolving config at start. */
  async all(org: string): Promise<Map<string, string>> {
    const rows = await this.db.all<{ name: string }>("SELECT name FROM secrets WHERE org = ?", [org]);
    const out = new Map<string, string>();
    for (const r of rows) out.set(r.name, (await this.get(org, r.name))!);
    return out;
  }

  async names(org: string): Promise<string[]> {
    return (await this.db.all<{ name: string }>("SELECT name FROM secrets WHERE org = ? ORDER BY name", [org])).map((r) => r.name);
  }
}

function loadKey(path: string): Buffer {
  if (existsSync(path)) {
    const key = Buffer.from(readFileSync(path, "utf8").trim(), "base64");
    if (key.length !== 32) throw new Error(`${path} does not hold a 32-byte key`);
    return key;
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  writeFileSync(path, key.toString("base64") + "\n", { mode: 0o600 });
  chmodSync(path, 0o600);
  return key;
}
