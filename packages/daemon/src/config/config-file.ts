import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The project's settings file. Its own module: the CLI finds a project by it without loading the config schemas. */
export const CONFIG_FILE = "config.yaml";

/** The text of `dir/config.yaml`; empty when there is none (every default). */
export function readConfigText(dir: string): string {
  try {
    return readFileSync(join(dir, CONFIG_FILE), "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    return "";
  }
}
