/** The per-org token bucket: a burst, then the rate; each org its own; the wait it asks for is the time to the next request. */
import { expect, it } from "vitest";
import { OrgRateLimiter } from "../../src/http/org-rate-limit.js";

it("lets a burst of one second's requests through, then one request per 1/rate seconds, per org", () => {
  let now = 0;
  const limiter = new OrgRateLimiter(10, undefined, () => now);
  for (let i = 0; i < 10; i++) expect(limiter.take("acme")).toBe(0);
  expect(limiter.take("acme")).toBeCloseTo(0.1);
  expect(limiter.take("beta")).toBe(0);
  now += 100;
  expect(limiter.take("acme")).toBe(0);
  expect(limiter.take("acme")).toBeGreaterThan(0);
  // A quiet spell fills the bucket up to the burst, no further.
  now += 60_000;
  for (let i = 0; i < 10; i++) expect(limiter.take("acme")).toBe(0);
  expect(limiter.take("acme")).toBeGreaterThan(0);
});

it("allows one request at a time below one a second", () => {
  let now = 0;
  const limiter = new OrgRateLimiter(0.5, undefined, () => now);
  expect(limiter.take("acme")).toBe(0);
  expect(limiter.take("acme")).toBeCloseTo(2);
  now += 2000;
  expect(limiter.take("acme")).toBe(0);
});
