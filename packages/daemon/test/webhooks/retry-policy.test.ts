/**
 * When a failed delivery is tried again: exponential backoff with jitter,
 * Retry-After when it asks for longer, and a dead letter once the next try
 * would fall outside the retry window.
 */
import { describe, expect, it } from "vitest";
import { BACKOFF_CAP_MS, backoffMs, nextAttemptAt, retryAfterMs } from "../../src/webhooks/retry-policy.js";

describe("retry policy", () => {
  it("doubles from 1 s per failed attempt, up to an hour, half of it random", () => {
    expect([1, 2, 3, 4].map((n) => backoffMs(n, () => 1))).toEqual([1000, 2000, 4000, 8000]);
    expect([1, 2, 3, 4].map((n) => backoffMs(n, () => 0))).toEqual([500, 1000, 2000, 4000]);
    expect(backoffMs(40, () => 1)).toBe(BACKOFF_CAP_MS);
    // Real jitter: many failing deliveries do not retry in step.
    const spread = new Set(Array.from({ length: 50 }, () => backoffMs(5)));
    expect(spread.size).toBeGreaterThan(10);
    for (const ms of spread) {
      expect(ms).toBeGreaterThanOrEqual(8000);
      expect(ms).toBeLessThanOrEqual(16000);
    }
  });

  it("reads Retry-After as seconds or an HTTP date", () => {
    const now = Date.parse("2026-12-01T07:00:00Z");
    expect(retryAfterMs("120", now)).toBe(120_000);
    expect(retryAfterMs("Tue, 01 Dec 2026 07:00:30 GMT", now)).toBe(30_000);
    expect(retryAfterMs("soon", now)).toBeUndefined();
    expect(retryAfterMs(undefined, now)).toBeUndefined();
  });

  it("waits as long as Retry-After asks when that is longer, and dead-letters past the window", () => {
    const base = { failedAttempts: 1, nowMs: 10_000, windowFromMs: 0, retryForMs: 60_000 };
    expect(nextAttemptAt(base, () => 1)).toBe(11_000);
    expect(nextAttemptAt({ ...base, retryAfterMs: 30_000 }, () => 1)).toBe(40_000);
    expect(nextAttemptAt({ ...base, retryAfterMs: 100 }, () => 1)).toBe(11_000);
    expect(nextAttemptAt({ ...base, retryAfterMs: 55_000 }, () => 1)).toBeUndefined();
    expect(nextAttemptAt({ ...base, nowMs: 59_500 }, () => 1)).toBeUndefined();
  });
});
