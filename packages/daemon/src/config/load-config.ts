import { readFileSync } from "node:fs";
import path from "node:path";
import { CONFIG_FILE } from "./config-file.js";
import { configSchema } from "./config-schema.js";
import { readWithSchema } from "./read-with-schema.js";
import { resolveReferences, type ReferenceSources } from "./references.js";
import type { ProjectConfig } from "./types.js";
import { parseYamlSource } from "./yaml-source.js";

export type LoadConfigOptions = ReferenceSources;

/** Reads `dir/config.yaml`; a missing file gives every default. */
export function loadConfig(dir: string, options: LoadConfigOptions = {}): ProjectConfig {
  let text = "";
  try {
    text = readFileSync(path.join(dir, CONFIG_FILE), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  return parseConfig(text, dir, options);
}

/** Parses config.yaml text as if it were in `dir`. */
export function parseConfig(text: string, dir: string, options: LoadConfigOptions = {}): ProjectConfig {
  const parsed = parseYamlSource(text, CONFIG_FILE);
  // An empty or comment-only file means every default.
  const raw = parsed.value === null || parsed.value === undefined ? {} : resolveReferences(parsed, options);
  const file = readWithSchema(configSchema, parsed.withValue(raw));
  const root = path.resolve(dir);
  return { dir: root, ...file, database: absoluteDatabase(file.database, root) };
}

/** A relative sqlite path is relative to the project dir; other URLs stay as written. */
function absoluteDatabase(url: string, root: string): string {
  if (!url.startsWith("sqlite:")) return url;
  const file = url.slice("sqlite:".length);
  return file === ":memory:" ? url : `sqlite:${path.resolve(root, file)}`;
}
