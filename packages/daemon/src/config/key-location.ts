import { readFileSync } from "node:fs";

/** `file:line` of a top-level `key:` in a YAML file or a Markdown file's frontmatter; just `file` when not found. */
export function keyLocation(path: string, file: string, key: string): string {
  try {
    const lines = readFileSync(path, "utf8").split("\n");
    const i = lines.findIndex((l) => new RegExp(`^${key}\\s*:`).test(l));
    return i >= 0 ? `${file}:${i + 1}` : file;
  } catch {
    return file;
  }
}
