import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const ADMIN_TOKEN_FILE = join(".wardrik", "admin-token");

/** Reads the project's admin token, creating it (owner-only) when missing. */
export function ensureAdminToken(dir: string): string {
  const path = join(dir, ADMIN_TOKEN_FILE);
  if (existsSync(path)) {
    const token = readFileSync(path, "utf8").trim();
    if (token) return token;
  }
  mkdirSync(join(dir, ".wardrik"), { recursive: true, mode: 0o700 });
  const token = "wdk_" + randomBytes(24).toString("base64url");
  writeFileSync(path, token + "\n", { mode: 0o600 });
  chmodSync(path, 0o600);
  return token;
}
