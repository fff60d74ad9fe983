import { randomBytes } from "node:crypto";
import { chmodSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Creates `path` (owner-only) holding `content`, unless it exists: then its
 * content is returned instead. Daemons of a cluster may start together in one
 * folder: the file is written whole under a name of its own and linked into
 * place, which fails for all but the first, so every one reads the same file
 * and none ever sees it half written.
 */
export function createFileOnce(path: string, content: string): string {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const draft = `${path}.${process.pid}.${randomBytes(4).toString("hex")}`;
  writeFileSync(draft, content, { mode: 0o600 });
  chmodSync(draft, 0o600);
  try {
    linkSync(draft, path);
    return content;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    return readFileSync(path, "utf8");
  } finally {
    rmSync(draft, { force: true });
  }
}
