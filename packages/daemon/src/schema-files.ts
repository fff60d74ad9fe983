/**
 * Where the JSON Schemas of project files ship, and the comment that names
 * them at the top of a file. Apart from editor-schemas.ts (which builds the
 * schemas from zod) so that `wardrik init` writes files without loading zod
 * and every config schema.
 */
import { join, posix } from "node:path";
import { PACKAGE_DIR } from "./package-dir.js";

export const SCHEMA_KINDS = ["config", "agent", "policy"] as const;
export type SchemaKind = (typeof SCHEMA_KINDS)[number];

/** The shipped folder of schema files: `packages/daemon/schemas/` (next to dist/ and src/). */
export const SCHEMAS_DIR = join(PACKAGE_DIR, "schemas");

/** Absolute path of the shipped schema file for `kind`. */
export function schemaFile(kind: SchemaKind): string {
  return join(SCHEMAS_DIR, `${kind}.json`);
}

/**
 * Where a project finds the schemas once it has run `npm install`: the
 * `@wardrik/protocol` package (which the project's package.json lists) ships
 * the same files, so the path works wherever the project is cloned.
 */
export const PROJECT_SCHEMAS_DIR = "node_modules/@wardrik/protocol/schemas";

/**
 * `text` with the comment that tells the YAML language server which schema a
 * project file follows, for config.yaml and policies/*.yaml; other files as
 * they are. The path is relative to the file, into the project's
 * node_modules (see PROJECT_SCHEMAS_DIR), not to this installation of wardrik.
 */
export function withSchemaComment(relativePath: string, text: string): string {
  const kind = kindOfFile(relativePath);
  if (kind === undefined) return text;
  const path = relativePath.replace(/\\/g, "/");
  const up = posix.relative(posix.dirname(path), ".") || ".";
  return `# yaml-language-server: $schema=${up}/${PROJECT_SCHEMAS_DIR}/${kind}.json\n${text}`;
}

function kindOfFile(relativePath: string): SchemaKind | undefined {
  const path = relativePath.replace(/\\/g, "/");
  if (path === "config.yaml") return "config";
  if (/^policies\/[^/]+\.ya?ml$/.test(path)) return "policy";
  return undefined;
}
