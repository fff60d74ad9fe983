/**
 * An agent's `output` key: the JSON Schema its final reply must fit, written
 * inline or as a path to a JSON file in the project (`schemas/report.json`).
 * A path is read when the agent file is, so a missing or broken schema is
 * the agent file's error at start and reload, not a failed turn later.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Source } from "./yaml-source.js";

export type OutputSchema = Record<string, unknown>;

/**
 * The schema `output` names, read from `projectDir` when it is a path.
 * `projectDir` undefined (an agent sent as JSON): only an inline schema is possible.
 */
export function resolveOutputSchema(
  output: string | OutputSchema | undefined,
  src: Source,
  projectDir: string | undefined,
): OutputSchema | undefined {
  if (output === undefined || typeof output === "object") return output;
  if (projectDir === undefined) src.fail(["output"], "output: must be a JSON Schema object here (a path needs a project directory)");
  const root = path.resolve(projectDir);
  const file = path.resolve(root, output);
  if (file !== root && !file.startsWith(root + path.sep)) src.fail(["output"], `output: "${output}" is outside the project directory`);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    return src.fail(["output"], `output: cannot read the schema file "${output}" (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return src.fail(["output"], `output: "${output}" is not JSON: ${(err as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return src.fail(["output"], `output: "${output}" must hold a JSON Schema object`);
  }
  return value as OutputSchema;
}
