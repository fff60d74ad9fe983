/** A positive number from an environment variable, or undefined when it is unset or not one. */
export function positiveNumber(value: string | undefined): number | undefined {
  const n = Number(value);
  return value !== undefined && Number.isFinite(n) && n > 0 ? n : undefined;
}

/** The shortest pause a polling interval from the environment may set: a smaller one would keep a core busy. */
export const MIN_INTERVAL_MS = 10;

/**
 * A polling interval in milliseconds from an environment variable (the test-only WARDRIK_*_MS settings):
 * undefined when it is unset or not a positive number, and never below MIN_INTERVAL_MS.
 */
export function intervalMs(value: string | undefined): number | undefined {
  const n = positiveNumber(value);
  return n === undefined ? undefined : Math.max(MIN_INTERVAL_MS, n);
}
