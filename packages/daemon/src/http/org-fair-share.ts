import type { MiddlewareHandler } from "hono";
import type { FairShare } from "../runtime/fair-share.js";
import type { ApiEnv } from "./api-env.js";

/**
 * Right after the token names the org: a request waits its org's turn of
 * the event loop (runtime/fair-share.ts) before its rate is checked, its body
 * read and its work done, so that another org's backlog of requests (those
 * about to be refused included) and turns runs beside it, not ahead of it.
 * Requests without an org (public routes) share one queue of their own.
 */
export function orgFairShare(fair: FairShare): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    await fair.enter(c.get("org") ?? "");
    return next();
  };
}
