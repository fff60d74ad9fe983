/** stdout carries results (a reply, a table, JSON); stderr carries progress and messages. */
export const out = (s: string): void => void process.stdout.write(s + "\n");
export const err = (s: string): void => void process.stderr.write(s + "\n");

/** A mistake in how the command was called: exit code 2. */
export class UsageError extends Error {}
