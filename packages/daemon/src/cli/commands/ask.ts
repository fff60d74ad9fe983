import type { Command } from "commander";
import type { AskOptions } from "../ask-turn.js";
import { setExitCode, UsageError } from "../output.js";

/** How long `ask` keeps trying, from its start, until the daemon has accepted the message (down, restarting, frozen), unless --retry-for says otherwise. */
const RETRY_FOR_S = 30;

export function registerAsk(program: Command): void {
  program
    .command("ask")
    .argument("<name>", "agent name, or org/name")
    .argument("<message>", "the message")
    .option("--conversation <id>", "conversation to use", "main")
    .option("--no-wait", "only queue the message")
    .option("--json", "print the result as JSON")
    .option("--retry-for <seconds>", "how long to keep resending while the daemon is unreachable", retrySeconds, RETRY_FOR_S)
    .description("send a message and wait for the reply (progress on stderr, reply on stdout)")
    .addHelpText(
      "after",
      `
Exit status: 0 the turn completed (with --no-wait: the daemon accepted the message),
1 it failed or was cancelled, or the message was not accepted; 2 usage error.
While the daemon is unreachable or restarting, the message is resent for up to
${RETRY_FOR_S} s (--retry-for) with the same Idempotency-Key, so it is queued once.

Examples:
  wardrik ask helper "What changed today?"
  wardrik ask triage "And now?" --conversation C1-1696.1234
  wardrik ask acme/triage "Summarise the queue" --json`,
    )
    .action(async (name: string, message: string, opts: AskOptions) => {
      // Loaded here: defining the command (--help) loads none of the client.
      const { ask } = await import("../ask-turn.js");
      setExitCode(await ask(name, message, opts));
    });
}

function retrySeconds(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || v.trim() === "")
    throw new UsageError(`--retry-for must be a number of seconds (0 or more), got ${v}`);
  return n;
}
