/**
 * Money is stored as integer micro-dollars, so sums are exact on every
 * database (a REAL column in PostgreSQL is single precision). Dollars appear
 * only at the edges: prices, events, the API.
 */
export function toMicros(usd: number): number {
  return Number.isFinite(usd) ? Math.round(usd * 1_000_000) : 0;
}

export function toUsd(micros: number): number {
  return micros / 1_000_000;
}
