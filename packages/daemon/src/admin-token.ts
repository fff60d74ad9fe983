import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ADMIN_TOKEN_FILE } from "./admin-token-file.js";
import { createFileOnce } from "./create-file-once.js";

export { ADMIN_TOKEN_FILE };

/** Reads the project's admin token, creating it (owner-only) when missing; daemons starting together agree on one. */
export function ensureAdminToken(dir: string): string {
  const path = join(dir, ADMIN_TOKEN_FILE);
  const existing = existsSync(path) ? readFileSync(path, "utf8").trim() : "";
  if (existing) return existing;
  const token = "wdk_" + randomBytes(24).toString("base64url");
  const kept = createFileOnce(path, token + "\n").trim();
  if (kept) return kept;
  // An empty file (a write an older release's crash cut short): this token takes its place.
  writeFileSync(path, token + "\n", { mode: 0o600 });
  return token;
}
