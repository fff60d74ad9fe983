import { Command, CommanderError, Option } from "commander";
import { WardrikError } from "@wardrik/protocol";
import { VERSION } from "../version.js";
import { registerAgent } from "./commands/agent.js";
import { registerApprovals } from "./commands/approvals.js";
import { registerAsk } from "./commands/ask.js";
import { registerCompletion } from "./commands/completion.js";
import { registerConsole } from "./commands/console.js";
import { registerDaemon } from "./commands/daemon.js";
import { registerEvents } from "./commands/events.js";
import { registerHistory } from "./commands/history.js";
import { registerInit } from "./commands/init.js";
import { registerLs } from "./commands/ls.js";
import { registerMcp } from "./commands/mcp.js";
import { registerReload } from "./commands/reload.js";
import { registerSchemaCommand } from "./commands/schema.js";
import { registerSecret } from "./commands/secret.js";
import { registerToken } from "./commands/token.js";
import { registerNodes } from "./commands/nodes.js";
import { registerTools } from "./commands/tools.js";
import { chosenExitCode, UsageError } from "./output.js";

/** Exit codes: 0 done, 1 the operation failed (or the turn failed / was cancelled), 2 usage. */
export async function main(argv: string[]): Promise<void> {
  // `wardrik events NAME | head`: a closed pipe ends the command quietly.
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(0);
  });
  const program = buildProgram();
  // Success is only what a command reports: if the process runs out of work
  // while a request is still unanswered (a connection dropped without an
  // error), it must not end with status 0.
  let finished = false;
  process.exitCode = 1;
  process.once("beforeExit", () => {
    if (!finished) process.stderr.write("wardrik: the connection to the daemon ended before it answered; nothing is confirmed.\n");
  });
  try {
    await program.parseAsync(argv);
    finished = true;
    process.exitCode = chosenExitCode() ?? 0;
  } catch (err) {
    finished = true;
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
  program.addHelpText(
    "after",
    `
Agents are named NAME, or ORG/NAME for an agent of another org (admin token only).
Inside a project the CLI reads config.yaml and .wardrik/admin-token; elsewhere WARDRIK_URL and WARDRIK_TOKEN.

Examples:
  wardrik init demo && cd demo && wardrik daemon
  wardrik ask helper "What changed today?"
  wardrik ls attention`,
  );
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
  registerNodes(program);
  registerSecret(program);
  registerSchemaCommand(program);
  registerTools(program);
  registerConsole(program);
  registerMcp(program);
  registerCompletion(program);
  program.addOption(new Option("--debug").hideHelp());
  return program;
}

export { WardrikError };
