import { Command, CommanderError, Option } from "commander";
import { VERSION } from "../version.js";
import { chosenExitCode, UsageError } from "./output.js";

/** Exit codes: 0 done, 1 the operation failed (or the turn failed / was cancelled), 2 usage. */
export async function main(argv: string[]): Promise<void> {
  // `wardrik events NAME | head`: a closed pipe ends the command quietly.
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(0);
  });
  const program = await buildProgram(argv);
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

type Register = (program: Command) => void;

/**
 * Every command, in the order --help lists them, and the module that defines
 * it, loaded only when needed: a command loads its own module and what that
 * imports, not every other command's (a Node process pays for each module it
 * loads, and most of a short command's CPU is Node's own start).
 */
const COMMANDS: Record<string, () => Promise<Register>> = {
  init: async () => (await import("./commands/init.js")).registerInit,
  daemon: async () => (await import("./commands/daemon.js")).registerDaemon,
  reload: async () => (await import("./commands/reload.js")).registerReload,
  ask: async () => (await import("./commands/ask.js")).registerAsk,
  ls: async () => (await import("./commands/ls.js")).registerLs,
  agent: async () => (await import("./commands/agent.js")).registerAgent,
  approvals: async () => (await import("./commands/approvals.js")).registerApprovals,
  events: async () => (await import("./commands/events.js")).registerEvents,
  deliveries: async () => (await import("./commands/deliveries.js")).registerDeliveries,
  history: async () => (await import("./commands/history.js")).registerHistory,
  token: async () => (await import("./commands/token.js")).registerToken,
  nodes: async () => (await import("./commands/nodes.js")).registerNodes,
  secret: async () => (await import("./commands/secret.js")).registerSecret,
  schema: async () => (await import("./commands/schema.js")).registerSchemaCommand,
  tools: async () => (await import("./commands/tools.js")).registerTools,
  console: async () => (await import("./commands/console.js")).registerConsole,
  mcp: async () => (await import("./commands/mcp.js")).registerMcp,
  completion: async () => (await import("./commands/completion.js")).registerCompletion,
};

/**
 * The commands `argv` needs: the one it names, none for a bare --version,
 * every one for help, a completion script (made from all of them) or a word
 * that names no command (commander suggests the nearest).
 */
function commandsFor(argv: string[]): string[] {
  const args = argv.slice(2);
  const name = args.find((a) => !a.startsWith("-"));
  if (name === undefined && args.length > 0 && args.every((a) => a === "--version" || a === "-V")) return [];
  if (name !== undefined && name !== "completion" && Object.hasOwn(COMMANDS, name)) return [name];
  return Object.keys(COMMANDS);
}

/** The program with the commands `argv` needs (every command when none is given). */
export async function buildProgram(argv: string[] = []): Promise<Command> {
  const registers = await Promise.all(commandsFor(argv).map((name) => COMMANDS[name]!()));
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
  // The project's settings are read before a command's action, never for --help or --version.
  program.hook("preAction", async () => (await import("./connect.js")).prepareProject());
  for (const register of registers) register(program);
  program.addOption(new Option("--debug").hideHelp());
  return program;
}
