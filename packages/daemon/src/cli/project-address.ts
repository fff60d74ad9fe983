import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readConfigText } from "../config/config-file.js";
import { VERSION } from "../version.js";
import type { ProjectSettings } from "./project-settings.js";

/** What a command that talks to the daemon needs of config.yaml: the org and where the daemon listens. */
export type ProjectAddress = Pick<ProjectSettings, "org" | "listen">;

/** The project's address, or why config.yaml cannot give it; `warning` is a mistake elsewhere in the file. */
export interface AddressRead {
  address?: ProjectAddress;
  warning?: string;
  error?: unknown;
}

/**
 * What the CLI read from config.yaml last time, keyed by everything the
 * reading depends on. Reading config.yaml means loading the YAML parser, zod
 * and every config schema: most of the CPU a short command such as `wardrik ls`
 * would cost. The file lives in .wardrik/ (owner-only, beside the admin token)
 * and holds no database URL: that may carry a password, and only the commands
 * that open the database themselves need it (they read config.yaml in full).
 */
const MEMO_FILE = join(".wardrik", "cli-settings.json");

interface Memo {
  key: string;
  address: ProjectAddress;
  warning?: string;
}

/**
 * Reads the org and address of the project in `dir`: from the memo when
 * config.yaml, the environment variables it names and this release are what
 * they were, else by reading config.yaml in full (loading the config modules
 * only then). Never throws: an error is kept for the command that needs the
 * address, so commands that do not (init, schema) are not stopped by it.
 */
export async function readProjectAddress(dir: string): Promise<AddressRead> {
  let text: string;
  try {
    text = readConfigText(dir);
  } catch (error) {
    return { error };
  }
  const key = memoKey(dir, text);
  const memo = readMemo(dir);
  if (memo?.key === key) return { address: memo.address, ...(memo.warning !== undefined ? { warning: memo.warning } : {}) };
  const { projectSettingsOf } = await import("./project-settings.js");
  let warning: string | undefined;
  let address: ProjectAddress;
  try {
    const s = projectSettingsOf(text, dir, (message) => (warning = message));
    address = { org: s.org, listen: s.listen };
  } catch (error) {
    return { error };
  }
  writeMemo(dir, { key, address, ...(warning !== undefined ? { warning } : {}) });
  return { address, ...(warning !== undefined ? { warning } : {}) };
}

/** The reading depends on the text, the directory (paths), the release (what the schema allows) and the `${env:NAME}` values it names. */
function memoKey(dir: string, text: string): string {
  const env = [...text.matchAll(/\$\{env:([^}]*)\}/g)].map((m) => [m[1], process.env[m[1]!] ?? null]);
  return fingerprint(JSON.stringify([VERSION, dir, text, env]));
}

/**
 * 64 bits of FNV-1a-style hashing (two 32-bit runs with different primes):
 * enough to notice a change, and no node:crypto to load, which would cost a
 * short command such as `wardrik ls` more than the rest of its reading.
 */
function fingerprint(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  return (a >>> 0).toString(36) + "." + (b >>> 0).toString(36);
}

function readMemo(dir: string): Memo | undefined {
  try {
    const memo = JSON.parse(readFileSync(join(dir, MEMO_FILE), "utf8")) as Partial<Memo>;
    const listen = memo.address?.listen;
    if (typeof memo.key !== "string" || typeof memo.address?.org !== "string") return undefined;
    if (typeof listen?.host !== "string" || typeof listen.port !== "number") return undefined;
    return memo as Memo;
  } catch {
    return undefined;
  }
}

/** Best effort: a read-only project, or one whose daemon never started (no .wardrik/), just reads config.yaml each time. */
function writeMemo(dir: string, memo: Memo): void {
  if (!existsSync(join(dir, ".wardrik"))) return;
  const path = join(dir, MEMO_FILE);
  const temporary = `${path}.${process.pid}`;
  try {
    writeFileSync(temporary, JSON.stringify(memo) + "\n", { mode: 0o600 });
    renameSync(temporary, path);
  } catch {
    // Not written: the next command reads config.yaml again.
  }
}
