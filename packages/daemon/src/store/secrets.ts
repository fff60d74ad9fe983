import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { keyFileStamp, loadKeyRing, PREVIOUS_KEYS_ENV, SECRET_KEY_ENV, type KeyRing, type SecretKey } from "../secrets/key-ring.js";
import type { Db } from "./db.js";

/**
 * `${secret:NAME}` values, encrypted at rest with AES-256-GCM. The key lives
 * outside the database (see secrets/key-ring.ts), so the database alone does
 * not reveal them.
 *
 * Stored form: `v2.KEYID.IV.TAG.BODY` (base64 parts). The org and name are
 * the cipher's additional authenticated data, so a ciphertext copied to
 * another row (or another org) fails to decrypt instead of handing out the
 * wrong secret. Rows written by the first release (`IV.TAG.BODY`, no key ID,
 * no additional data) are still read; a rotation rewrites them.
 */
const VERSION = "v2";

export interface SecretStoreOptions {
  /** Where WARDRIK_SECRET_KEY comes from; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Called with every value stored, so the daemon can blank it from what it records. */
  onSet?: (org: string, name: string, value: string) => void;
}

export interface StoredSecret {
  org: string;
  name: string;
}

export interface RotationResult {
  /** Secrets re-encrypted under the current key in this pass. */
  rotated: number;
  /** Secrets no key of the ring could decrypt (they are left as they are). */
  failed: { org: string; name: string; error: string }[];
}

export class SecretStore {
  private ring: KeyRing;
  private stamp: string;
  private readonly env: NodeJS.ProcessEnv;

  constructor(
    private readonly db: Db,
    private readonly keyPath: string,
    private readonly options: SecretStoreOptions = {},
  ) {
    this.env = options.env ?? process.env;
    this.ring = loadKeyRing(keyPath, this.env);
    this.stamp = keyFileStamp(keyPath);
  }

  /** The keys, as they are now (a rotation rereads the key file): the cluster's node key is derived from them. */
  get keyRing(): KeyRing {
    return this.keys();
  }

  /** The ID of the key new secrets are encrypted with. */
  get currentKeyId(): string {
    return this.keys().current.id;
  }

  async set(org: string, name: string, value: string): Promise<void> {
    const sealed = seal(this.keys().current, additionalData(org, name), value);
    await this.db.transaction((tx) =>
      tx.run(
        "INSERT INTO secrets (org, name, ciphertext, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (org, name) DO UPDATE SET ciphertext = excluded.ciphertext, updated_at = excluded.updated_at",
        [org, name, sealed, new Date().toISOString()],
      ),
    );
    this.options.onSet?.(org, name, value);
  }

  async get(org: string, name: string): Promise<string | undefined> {
    const row = await this.db.get<{ ciphertext: string }>("SELECT ciphertext FROM secrets WHERE org = ? AND name = ?", [org, name]);
    return row ? this.open(org, name, row.ciphertext) : undefined;
  }

  /**
   * An org's secrets for resolving references: those that decrypt, by name,
   * and why each other one does not (a message that names it, never a value).
   * One unreadable row spoils nothing else.
   */
  async readable(org: string): Promise<{ values: Map<string, string>; unreadable: Map<string, string> }> {
    const rows = await this.db.all<{ name: string; ciphertext: string }>("SELECT name, ciphertext FROM secrets WHERE org = ?", [org]);
    const values = new Map<string, string>();
    const unreadable = new Map<string, string>();
    for (const r of rows) {
      try {
        values.set(r.name, this.open(org, r.name, r.ciphertext));
      } catch (err) {
        unreadable.set(r.name, (err as Error).message);
      }
    }
    return { values, unreadable };
  }

  /** An org's secret names in order, each with why it cannot be decrypted when it cannot (`wardrik secret ls`). */
  async list(org: string): Promise<{ name: string; error?: string }[]> {
    const { unreadable } = await this.readable(org);
    return (await this.names(org)).map((name) => (unreadable.has(name) ? { name, error: unreadable.get(name)! } : { name }));
  }

  /** Every org's secrets that can be decrypted, and those that cannot (with why), for the daemon's redactor. */
  async everything(): Promise<{ values: (StoredSecret & { value: string })[]; unreadable: (StoredSecret & { error: string })[] }> {
    const rows = await this.db.all<{ org: string; name: string; ciphertext: string }>("SELECT org, name, ciphertext FROM secrets");
    const values: (StoredSecret & { value: string })[] = [];
    const unreadable: (StoredSecret & { error: string })[] = [];
    for (const r of rows) {
      try {
        values.push({ org: r.org, name: r.name, value: this.open(r.org, r.name, r.ciphertext) });
      } catch (err) {
        unreadable.push({ org: r.org, name: r.name, error: (err as Error).message });
      }
    }
    return { values, unreadable };
  }

  async names(org: string): Promise<string[]> {
    return (await this.db.all<{ name: string }>("SELECT name FROM secrets WHERE org = ? ORDER BY name", [org])).map((r) => r.name);
  }

  /**
   * Re-encrypts every secret not yet under the current key (in the current
   * format). A row changed meanwhile (a `secret set` during the rotation) is
   * left alone: it was written with the current key already.
   */
  async rotate(): Promise<RotationResult> {
    const current = this.keys().current;
    const rows = await this.db.all<{ org: string; name: string; ciphertext: string }>(
      "SELECT org, name, ciphertext FROM secrets WHERE ciphertext NOT LIKE ?",
      [`${VERSION}.${current.id}.%`],
    );
    const result: RotationResult = { rotated: 0, failed: [] };
    for (const r of rows) {
      let value: string;
      try {
        value = this.open(r.org, r.name, r.ciphertext);
      } catch (err) {
        result.failed.push({ org: r.org, name: r.name, error: (err as Error).message });
        continue;
      }
      const sealed = seal(current, additionalData(r.org, r.name), value);
      const { changes } = await this.db.transaction((tx) =>
        tx.run("UPDATE secrets SET ciphertext = ?, updated_at = ? WHERE org = ? AND name = ? AND ciphertext = ?", [
          sealed,
          new Date().toISOString(),
          r.org,
          r.name,
          r.ciphertext,
        ]),
      );
      result.rotated += changes;
    }
    return result;
  }

  /** How many secrets are not under the current key. */
  async notUnderCurrentKey(): Promise<number> {
    const row = await this.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM secrets WHERE ciphertext NOT LIKE ?", [
      `${VERSION}.${this.keys().current.id}.%`,
    ]);
    return Number(row?.n ?? 0);
  }

  /**
   * Seals a value of another store (MCP grants) with this key ring, bound to
   * `kind`, `org` and `name`: it opens only through `unseal` with the same three.
   */
  seal(kind: string, org: string, name: string, value: string): string {
    return seal(this.keys().current, additionalData(org, name, kind), value);
  }

  /** Opens what `seal` made; `what` names the value in errors (never the value). */
  unseal(kind: string, org: string, name: string, ciphertext: string, what: string): string {
    return this.openAs(additionalData(org, name, kind), ciphertext, what, `org ${org} and ${kind} ${name}`);
  }

  /** Ciphertexts under the current key start with this; a rotation rewrites the others. */
  get currentPrefix(): string {
    return `${VERSION}.${this.keys().current.id}.`;
  }

  /** The key ring, reread when the key file was replaced (`wardrik secret rotate-key` on a running daemon). */
  private keys(): KeyRing {
    const stamp = keyFileStamp(this.keyPath);
    if (stamp !== this.stamp) {
      this.ring = loadKeyRing(this.keyPath, this.env);
      this.stamp = keyFileStamp(this.keyPath);
    }
    return this.ring;
  }

  private open(org: string, name: string, ciphertext: string): string {
    return this.openAs(additionalData(org, name), ciphertext, `secret ${name}`, `org ${org} and name ${name}`, true);
  }

  /** `legacy`: also read the first release's form (secrets only; nothing else was ever stored that way). */
  private openAs(aad: Buffer, ciphertext: string, what: string, row: string, legacy = false): string {
    const parts = ciphertext.split(".");
    const ring = this.keys();
    if (parts[0] === VERSION && parts.length === 5) {
      const key = ring.readable.find((k) => k.id === parts[1]);
      if (!key) {
        throw new Error(
          `${what} was encrypted with key ${parts[1]}, which is not among this daemon's keys (${ring.readable.map((k) => k.id).join(", ")}); give it in ${SECRET_KEY_ENV}, ${PREVIOUS_KEYS_ENV} or the key file`,
        );
      }
      const opened = decrypt(key, parts.slice(2), aad);
      if (opened === undefined) throw new Error(`${what} cannot be decrypted: its stored value was not written for ${row}, or was altered`);
      return opened;
    }
    if (legacy && parts.length === 3) {
      // The first release's form: no key ID and no additional data; its key was the key file's.
      for (const key of ring.readable) {
        const opened = decrypt(key, parts, undefined);
        if (opened !== undefined) return opened;
      }
      throw new Error(
        `${what} cannot be decrypted: none of this daemon's keys (${ring.source} and older ones) is the key it was stored with`,
      );
    }
    throw new Error(`${what} is stored in a form this version cannot read`);
  }
}

/** Binds a ciphertext to its row: the same bytes under another kind, org or name do not decrypt. */
function additionalData(org: string, name: string, kind = "secret"): Buffer {
  return Buffer.from(`wardrik ${kind} ${VERSION}\0${org}\0${name}`, "utf8");
}

function seal(key: SecretKey, aad: Buffer, value: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key.key, iv);
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(value, "utf8"), cipher.final()]);
  return [VERSION, key.id, ...[iv, cipher.getAuthTag(), body].map((b) => b.toString("base64"))].join(".");
}

function decrypt(key: SecretKey, parts: string[], aad: Buffer | undefined): string | undefined {
  const [iv, tag, body] = parts.map((p) => Buffer.from(p, "base64"));
  if (!iv || !tag || !body || iv.length !== 12 || tag.length !== 16) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key.key, iv);
    if (aad) decipher.setAAD(aad);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
  } catch {
    return undefined;
  }
}
