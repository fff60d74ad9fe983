import { Command, CommanderError, Option } from "commander";
import { WardrikError } from "@wardrik/protocol";
import { VERSION } from "../version.js";
import { registerAgent } from "./commands/agent.js";
import { registerApprovals } from "./commands/approvals.js";
import { registerAsk } from "./commands/ask.js";
import { registerDaemon } from "./commands/daemon.js";
import { registerEvents } from "./commands/events.js";
import { registerHistory } from "./commands/history.js";
import { registerInit } from "./commands/init.js";
import { registerLs } from "./commands/ls.js";
import { registerReload } from "./commands/reload.js";
import { registerSchemaCommand } from "./commands/schema.js";
import { registerSecret } from "./commands/secret.js";
import { registerToken } from "./commands/token.js";
import { UsageError } from "./output.js";

/** Exit codes: 0 done, 1 the operation failed (or the turn failed / was cancelled), 2 usage. */
export async function main(argv: string[]): Promise<void> {
  // `wardrik events NAME | head`: a closed pipe ends the command quietly.
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(0);
  });
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version" || err.code === "commander.help") process.exit(0);
      process.exit(2);
    }
    if (err instanceof UsageError) {
      process.stderr.write(`wardrik: ${err.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`wardrik: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}

export function buildProgram(): Command {
  // Set before the subcommands exist: commander copies it to each, so usage errors exit 2.
  const program = new Command("wardrik").description("Run governed, durable LLM agents").version(VERSION).exitOverride();
  registerInit(program);
  registerDaemon(program);
  registerReload(program);
  registerAsk(program);
  registerLs(program);
  registerAgent(program);
  registerApprovals(program);
  registerEvents(program);
  registerHistory(program);
  registerToken(program);
  registerSecret(program);
  registerSchemaCommand(program);
  program.addOption(new Option("--debug").hideHelp());
  return program;
}

export { WardrikError };
