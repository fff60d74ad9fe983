/**
 * The format of saved turns and agent definitions. A change that would alter
 * how an unfinished turn resumes bumps it; turns keep the format they were
 * saved with, and a turn from a newer format makes its agent unreadable
 * instead of being resumed wrongly.
 */
export const STATE_FORMAT = 1;

/** Saved state that cannot be read: the agent becomes unreadable rather than the daemon failing. */
export class StateError extends Error {}

/** Parses a stored JSON value; a broken one is a StateError naming what it was. */
export function parseStored(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new StateError(`The saved ${what} cannot be read: ${(err as Error).message}`);
  }
}
