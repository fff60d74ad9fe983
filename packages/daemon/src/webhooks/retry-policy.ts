/**
 * When a failed delivery is tried again: exponential backoff from 1 s,
 * doubling per attempt up to an hour between attempts, with jitter (half the
 * delay is random) so many failing deliveries do not retry in step; a
 * subscriber's Retry-After wins when it asks for longer. Past the retry
 * window the delivery is dead-lettered instead.
 */
export const BACKOFF_BASE_MS = 1000;
export const BACKOFF_CAP_MS = 60 * 60 * 1000;

export function backoffMs(failedAttempts: number, random: () => number = Math.random): number {
  const full = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, failedAttempts - 1));
  return Math.round(full / 2 + random() * (full / 2));
}

/** Retry-After as milliseconds from `nowMs`: delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null | undefined, nowMs: number): number | undefined {
  if (!header) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** The next attempt's time, or undefined when it would fall outside the retry window (dead letter). */
export function nextAttemptAt(
  opts: { failedAttempts: number; nowMs: number; windowFromMs: number; retryForMs: number; retryAfterMs?: number | undefined },
  random?: () => number,
): number | undefined {
  const wait = Math.max(backoffMs(opts.failedAttempts, random), opts.retryAfterMs ?? 0);
  const at = opts.nowMs + wait;
  return at > opts.windowFromMs + opts.retryForMs ? undefined : at;
}
