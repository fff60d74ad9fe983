import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { ADMIN_TOKEN_FILE } from "../admin-token-file.js";
import { CONFIG_FILE } from "../config/config-file.js";

/**
 * The project directory that holds `start` (config.yaml or .wardrik/ marks
 * one), if any. Its own module: `wardrik daemon` finds its project with it
 * and loads nothing of the client (connect.ts).
 */
export function findProjectDir(start: string): string | undefined {
  let dir = resolve(start);
  for (;;) {
    if (existsSync(join(dir, CONFIG_FILE)) || existsSync(join(dir, ADMIN_TOKEN_FILE))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}
