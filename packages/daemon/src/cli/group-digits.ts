/**
 * A whole number with a comma between groups of three digits, as
 * `toLocaleString("en-US")` writes it, without that call's first-use cost:
 * loading ICU's locale data, about 30 ms of CPU of a `wardrik ask` (#32).
 * Other numbers (fractions, beyond 2^53) still go through toLocaleString.
 */
export function groupDigits(n: number): string {
  if (!Number.isSafeInteger(n)) return n.toLocaleString("en-US");
  const digits = String(Math.abs(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return n < 0 ? `-${digits}` : digits;
}
