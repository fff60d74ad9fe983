import { createHash, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { createFileOnce } from "../create-file-once.js";

/**
 * The keys that encrypt secrets (AES-256-GCM, 32 bytes each).
 *
 * Where they come from:
 * - `WARDRIK_SECRET_KEY` (base64): the current key, for daemons that share one
 *   (a cluster). `WARDRIK_SECRET_KEY_PREVIOUS` (base64, comma-separated) lists
 *   keys that are still read while a rotation runs.
 * - Otherwise `.wardrik/secret-key` (owner-only): one base64 key a line, the
 *   first is current, the others are older keys still read. Made at first
 *   start. Keys of the file are read in both cases, so a project can move to
 *   an environment key and rotate onto it.
 *
 * Each ciphertext names the ID of its key (a hash of the key, never the key),
 * so any key of the ring can read it and a rotation can tell what is left.
 */
export const SECRET_KEY_ENV = "WARDRIK_SECRET_KEY";
export const PREVIOUS_KEYS_ENV = "WARDRIK_SECRET_KEY_PREVIOUS";

export interface SecretKey {
  id: string;
  key: Buffer;
}

export interface KeyRing {
  /** New ciphertexts use this key. */
  current: SecretKey;
  /** Every key that can decrypt, current first. */
  readable: SecretKey[];
  /** Where the current key came from, for messages. */
  source: string;
}

export function keyId(key: Buffer): string {
  return "k" + createHash("sha256").update("wardrik secret key id\0").update(key).digest("hex").slice(0, 12);
}

/** A 32-byte key from base64 text; the error says `where` it was read. */
export function parseKey(text: string, where: string): SecretKey {
  const clean = text.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(clean)) throw new Error(`${where}: not base64 (make a key with: openssl rand -base64 32)`);
  const key = Buffer.from(clean, "base64");
  if (key.length !== 32)
    throw new Error(`${where}: the key is ${key.length} bytes; AES-256 needs 32 (make one with: openssl rand -base64 32)`);
  return { id: keyId(key), key };
}

export function newKey(): SecretKey {
  const key = randomBytes(32);
  return { id: keyId(key), key };
}

/** The keys of a key file, current first; [] when the file does not exist. */
export function readKeyFile(path: string): SecretKey[] {
  if (!existsSync(path)) return [];
  const keys: SecretKey[] = [];
  readFileSync(path, "utf8")
    .split("\n")
    .forEach((line, i) => {
      if (line.trim() === "" || line.trim().startsWith("#")) return;
      keys.push(parseKey(line, `${path}:${i + 1}`));
    });
  if (keys.length === 0) throw new Error(`${path} holds no key`);
  return keys;
}

/** Replaces the key file in one step (a reader never sees half a file), readable by its owner only. */
export function writeKeyFile(path: string, keys: SecretKey[]): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  const lines = keys.map((k) => k.key.toString("base64"));
  const note = keys.length > 1 ? "# The first key is current; the others are read until a rotation has re-encrypted every secret.\n" : "";
  writeFileSync(tmp, note + lines.join("\n") + "\n", { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

/** The ring from the environment and the key file, making the file's first key when neither has one. */
export function loadKeyRing(keyPath: string, env: NodeJS.ProcessEnv): KeyRing {
  const previous = (env[PREVIOUS_KEYS_ENV] ?? "")
    .split(",")
    .filter((s) => s.trim() !== "")
    .map((s, i) => parseKey(s, `${PREVIOUS_KEYS_ENV} (key ${i + 1})`));
  const fromEnv = env[SECRET_KEY_ENV];
  let fileKeys = readKeyFile(keyPath);
  let current: SecretKey;
  let source: string;
  if (fromEnv !== undefined && fromEnv.trim() !== "") {
    current = parseKey(fromEnv, SECRET_KEY_ENV);
    source = SECRET_KEY_ENV;
  } else {
    if (fileKeys.length === 0) {
      // Nodes starting together in one folder: the first key written is everyone's.
      createFileOnce(keyPath, newKey().key.toString("base64") + "\n");
      fileKeys = readKeyFile(keyPath);
    }
    current = fileKeys[0]!;
    source = keyPath;
  }
  const readable = new Map<string, SecretKey>();
  for (const k of [current, ...previous, ...fileKeys]) if (!readable.has(k.id)) readable.set(k.id, k);
  return { current, readable: [...readable.values()], source };
}

/** Something that changes when the key file is replaced, so a running daemon rereads it after a rotation. */
export function keyFileStamp(path: string): string {
  try {
    const s = statSync(path);
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return "none";
  }
}
