import type { Command } from "commander";

/** stdout carries results (a reply, a table, JSON); stderr carries progress and messages. */
export const out = (s: string): void => void process.stdout.write(s + "\n");
export const err = (s: string): void => void process.stderr.write(s + "\n");

/** A mistake in how the command was called: exit code 2. */
export class UsageError extends Error {}

let exitCode: number | undefined;

/** The exit status a command chose; main() applies it once the command has returned. */
export function setExitCode(code: number): void {
  exitCode = code;
}

export function chosenExitCode(): number | undefined {
  return exitCode;
}

/** `--json` output: one JSON document on stdout. */
export function json(value: unknown): void {
  out(JSON.stringify(value, null, 2));
}

/** Adds an Examples section to a command's --help. */
export function examples<C extends Command>(command: C, ...lines: string[]): C {
  return command.addHelpText("after", `\nExamples:\n${lines.map((l) => `  ${l}`).join("\n")}`);
}

/** An option's parser that takes it more than once (`--live a --live b`), for a default of []. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
