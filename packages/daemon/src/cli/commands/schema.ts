import { existsSync, readFileSync } from "node:fs";
import { Argument, type Command } from "commander";
import type { SchemaKind } from "../../schema-files.js";

const KINDS: readonly SchemaKind[] = ["config", "agent", "policy"];

/** `wardrik schema config|agent|policy`: the JSON Schema editors use to check that kind of file. */
export function registerSchemaCommand(program: Command): void {
  program
    .command("schema")
    .addArgument(new Argument("<kind>", "which file: config (config.yaml), agent (agents/*.md frontmatter) or policy").choices(KINDS))
    .description("print the JSON Schema of config.yaml, agent frontmatter or policy files")
    .addHelpText(
      "after",
      [
        "",
        "Example:",
        "  wardrik schema config > config.schema.json",
        "",
        "Files made by `wardrik init` already name the schema in a first line that the",
        "YAML language server (VS Code, Neovim, ...) reads: # yaml-language-server: $schema=...",
      ].join("\n"),
    )
    .action(async (kind: SchemaKind) => {
      // The build writes each schema to the shipped file (the same text): printing it costs
      // no zod and no config module. Built from the zod schemas only where it is missing.
      const shipped = (await import("../../schema-files.js")).schemaFile(kind);
      if (existsSync(shipped)) return void process.stdout.write(readFileSync(shipped, "utf8"));
      const { jsonSchemaFor } = await import("../../editor-schemas.js");
      process.stdout.write(`${JSON.stringify(jsonSchemaFor(kind), null, 2)}\n`);
    });
}
