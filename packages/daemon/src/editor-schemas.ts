/**
 * JSON Schemas of config.yaml, agent frontmatter and policy files, made from
 * the zod schemas the daemon validates with, so editors check and complete
 * exactly what the daemon accepts. Written to `schemas/*.json` at build,
 * printed by `wardrik schema KIND`, and named by the `yaml-language-server`
 * comment `wardrik init` puts at the top of config.yaml and policy files.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { agentFrontmatterSchema } from "./config/agent-schema.js";
import { configSchema } from "./config/config-schema.js";
import { policySchema } from "./policy/policy-schema.js";
import { SCHEMA_KINDS, SCHEMAS_DIR, type SchemaKind } from "./schema-files.js";

export { SCHEMA_KINDS, SCHEMAS_DIR, schemaFile, withSchemaComment } from "./schema-files.js";
export type { SchemaKind } from "./schema-files.js";

const SOURCES: Record<SchemaKind, { schema: z.ZodType; title: string }> = {
  config: { schema: configSchema, title: "Wardrik config.yaml" },
  agent: { schema: agentFrontmatterSchema, title: "Wardrik agent file frontmatter (agents/NAME.md)" },
  policy: { schema: policySchema, title: "Wardrik policy (policies/NAME.yaml)" },
};

/** Draft 7: the newest draft the YAML language server (VS Code, Neovim, ...) reads. */
export function jsonSchemaFor(kind: SchemaKind): Record<string, unknown> {
  const { schema, title } = SOURCES[kind];
  // "input": what a person writes, so keys with defaults are optional and show their default.
  const json = z.toJSONSchema(schema, { target: "draft-7", io: "input", unrepresentable: "any" });
  return { ...json, title };
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
