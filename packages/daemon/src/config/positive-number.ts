/** A positive number from an environment variable, or undefined when it is unset or not one. */
export function positiveNumber(value: string | undefined): number | undefined {
  const n = Number(value);
  return value !== undefined && Number.isFinite(n) && n > 0 ? n : undefined;
}
