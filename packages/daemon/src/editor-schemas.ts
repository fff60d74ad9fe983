/**
 * JSON Schemas of config.yaml, agent frontmatter and policy files, made from
 * the zod schemas the daemon validates with, so editors check and complete
 * exactly what the daemon accepts. Written to `schemas/*.json` at build,
 * printed by `wardrik schema KIND`, and named by the `yaml-language-server`
 * comment `wardrik init` puts at the top of config.yaml and policy files.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { agentFrontmatterSchema } from "./config/agent-schema.js";
import { configSchema } from "./config/config-schema.js";
import { policySchema } from "./policy/policy-schema.js";

export const SCHEMA_KINDS = ["config", "agent", "policy"] as const;
export type SchemaKind = (typeof SCHEMA_KINDS)[number];

const SOURCES: Record<SchemaKind, { schema: z.ZodType; title: string }> = {
  config: { schema: configSchema, title: "Wardrik config.yaml" },
  agent: { schema: agentFrontmatterSchema, title: "Wardrik agent file frontmatter (agents/NAME.md)" },
  policy: { schema: policySchema, title: "Wardrik policy (policies/NAME.yaml)" },
};

/** The shipped folder of schema files: `packages/daemon/schemas/` (next to dist/ and src/). */
export const SCHEMAS_DIR = fileURLToPath(new URL("../schemas/", import.meta.url));

/** Draft 7: the newest draft the YAML language server (VS Code, Neovim, ...) reads. */
export function jsonSchemaFor(kind: SchemaKind): Record<string, unknown> {
  const { schema, title } = SOURCES[kind];
  // "input": what a person writes, so keys with defaults are optional and show their default.
  const json = z.toJSONSchema(schema, { target: "draft-7", io: "input", unrepresentable: "any" });
  return { ...json, title };
}

/** Absolute path of the shipped schema file for `kind`. */
export function schemaFile(kind: SchemaKind): string {
  return join(SCHEMAS_DIR, `${kind}.json`);
}

/** Writes every schema to `dir` (the build calls it with SCHEMAS_DIR). */
export function writeJsonSchemas(dir: string = SCHEMAS_DIR): string[] {
  mkdirSync(dir, { recursive: true });
  return SCHEMA_KINDS.map((kind) => {
    const file = join(dir, `${kind}.json`);
    writeFileSync(file, `${JSON.stringify(jsonSchemaFor(kind), null, 2)}\n`);
    return file;
  });
}

/**
 * `text` with the comment that tells the YAML language server which schema a
 * project file follows, for config.yaml and policies/*.yaml; other files as
 * they are. The path is absolute: the schema ships with this installation of
 * wardrik, which need not be inside the project.
 */
export function withSchemaComment(relativePath: string, text: string): string {
  const kind = kindOfFile(relativePath);
  if (kind === undefined) return text;
  return `# yaml-language-server: $schema=${schemaFile(kind)}\n${text}`;
}

function kindOfFile(relativePath: string): SchemaKind | undefined {
  const path = relativePath.replace(/\\/g, "/");
  if (path === "config.yaml") return "config";
  if (/^policies\/[^/]+\.ya?ml$/.test(path)) return "policy";
  return undefined;
}
