import type { MiddlewareHandler } from "hono";
import { WardrikError } from "@wardrik/protocol";
import type { ApiEnv } from "./api-env.js";

/**
 * A token bucket per org: `perSecond` requests a second on average, and up
 * to `burst` (one second's worth) at once after a quiet spell. One entry per org that sent a
 * request; an org's bucket is full again after `burst / perSecond` seconds.
 */
export class OrgRateLimiter {
  private readonly buckets = new Map<string, { tokens: number; atMs: number }>();

  constructor(
    readonly perSecond: number,
    readonly burst: number = Math.max(1, perSecond),
    private readonly nowMs: () => number = () => performance.now(),
  ) {}

  /** Takes one request of `org`'s budget: 0 when it may go, else the seconds until it may. */
  take(org: string): number {
    const now = this.nowMs();
    const b = this.buckets.get(org) ?? { tokens: this.burst, atMs: now };
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.atMs) / 1000) * this.perSecond);
    b.atMs = now;
    this.buckets.set(org, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return (1 - b.tokens) / this.perSecond;
  }
}

/**
 * `limits.org_requests_per_s`: right after the bearer token names the org,
 * before the body is read or anything else is done, a request past its org's
 * budget is answered 429 with Retry-After. Public routes (no org yet) and the
 * admin token (the operator's own) are not counted.
 */
export function orgRateLimit(limiter: OrgRateLimiter): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const org = c.get("org");
    if (org === undefined || c.get("admin")) return next();
    const wait = limiter.take(org);
    if (wait > 0) {
      throw new WardrikError(
        "rate_limited",
        `Org ${org} sent more than ${limiter.perSecond} requests a second (config.yaml limits.org_requests_per_s); send again in ${Math.ceil(wait)} s.`,
        { retryable: true, retryAfter: wait },
      );
    }
    return next();
  };
}
