import { Command, CommanderError, Option } from "commander";
import { VERSION } from "../version.js";
import { chosenExitCode, UsageError } from "./output.js";

// bin/wardrik.js turns it on for `wardrik daemon`, before the daemon's modules load.
export { mapStackTraces } from "../source-mapped-stacks.js";

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
    const shown = await explained(err);
    process.stderr.write(`wardrik: ${shown instanceof Error ? shown.message : String(shown)}\n`);
    process.exit(1);
  }
}

/** A refused token, said as what is likely wrong (connect.ts); other errors as they are. */
async function explained(err: unknown): Promise<unknown> {
  if ((err as { status?: unknown } | null)?.status !== 401) return err;
  return (await import("./connect.js")).explainRefusedToken(err);
}

type Register = (program: Command) => void;

/**
 * Every module of commands, in the order --help lists them, with the words it
 * registers, loaded only when needed: a command loads its own module and what
 * that imports, not every other command's (a Node process pays for each module
 * it loads, and most of a short command's CPU is Node's own start).
 */
const COMMANDS: { words: readonly string[]; load: () => Promise<Register> }[] = [
  { words: ["init"], load: async () => (await import("./commands/init.js")).registerInit },
  { words: ["daemon"], load: async () => (await import("./commands/daemon.js")).registerDaemon },
  { words: ["reload"], load: async () => (await import("./commands/reload.js")).registerReload },
  { words: ["ask"], load: async () => (await import("./commands/ask.js")).registerAsk },
  { words: ["ls"], load: async () => (await import("./commands/ls.js")).registerLs },
  { words: ["doctor"], load: async () => (await import("./commands/doctor.js")).registerDoctor },
  { words: ["agent"], load: async () => (await import("./commands/agent.js")).registerAgent },
  { words: ["approve", "deny"], load: async () => (await import("./commands/approvals.js")).registerApprovals },
  { words: ["events"], load: async () => (await import("./commands/events.js")).registerEvents },
  { words: ["deliveries"], load: async () => (await import("./commands/deliveries.js")).registerDeliveries },
  { words: ["history"], load: async () => (await import("./commands/history.js")).registerHistory },
  { words: ["fork", "replay"], load: async () => (await import("./commands/time-machine.js")).registerTimeMachine },
  { words: ["eval"], load: async () => (await import("./commands/eval.js")).registerEval },
  { words: ["token"], load: async () => (await import("./commands/token.js")).registerToken },
  { words: ["nodes"], load: async () => (await import("./commands/nodes.js")).registerNodes },
  { words: ["secret"], load: async () => (await import("./commands/secret.js")).registerSecret },
  { words: ["schema"], load: async () => (await import("./commands/schema.js")).registerSchemaCommand },
  { words: ["tools"], load: async () => (await import("./commands/tools.js")).registerTools },
  { words: ["console"], load: async () => (await import("./commands/console.js")).registerConsole },
  { words: ["mcp"], load: async () => (await import("./commands/mcp.js")).registerMcp },
  { words: ["completion"], load: async () => (await import("./commands/completion.js")).registerCompletion },
];

/** Commands that never read the project's config.yaml (or read it themselves, as the daemon and doctor do). */
const WITHOUT_PROJECT = new Set(["init", "daemon", "doctor", "schema", "completion"]);

/**
 * The modules `argv` needs: the one of the command it names, none for a bare
 * --version, every one for help, a completion script (made from all of them)
 * or a word that names no command (commander suggests the nearest).
 */
function commandsFor(argv: string[]): typeof COMMANDS {
  const args = argv.slice(2);
  const word = args.find((a) => !a.startsWith("-"));
  if (word === undefined && args.length > 0 && args.every((a) => a === "--version" || a === "-V")) return [];
  const named = COMMANDS.find((c) => c.words.includes(word ?? ""));
  return named !== undefined && word !== "completion" ? [named] : COMMANDS;
}

/** The program with the commands `argv` needs (every command when none is given). */
export async function buildProgram(argv: string[] = []): Promise<Command> {
  const registers = await Promise.all(commandsFor(argv).map((c) => c.load()));
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
  // The project's settings are read before the action of a command that talks to the daemon, never for --help or --version.
  program.hook("preAction", async (_program, action) => {
    if (!WITHOUT_PROJECT.has(topCommand(action).name())) await (await import("./connect.js")).prepareProject();
  });
  for (const register of registers) register(program);
  program.addOption(new Option("--debug").hideHelp());
  return program;
}

/** The command right below the program that `command` is, or is under (`secret` for `secret ls`). */
function topCommand(command: Command): Command {
  let c = command;
  while (c.parent?.parent) c = c.parent;
  return c;
}
