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
      // Loaded on use: the schemas pull in zod and every config module.
      const { jsonSchemaFor } = await import("../../editor-schemas.js");
      process.stdout.write(`${JSON.stringify(jsonSchemaFor(kind), null, 2)}\n`);
    });
}
