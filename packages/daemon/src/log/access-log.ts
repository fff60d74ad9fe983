import type { MiddlewareHandler } from "hono";
import type { Logger } from "./logger.js";

/**
 * A Hono middleware that writes one debug line per HTTP request once its
 * response has begun: method, path (without the query, which may carry
 * values worth keeping out of logs), status, milliseconds and the request ID
 * when the request or the response carries one. Mount it first so it also
 * sees answers made by error handlers.
 */
export function accessLog(log: Logger | undefined): MiddlewareHandler {
  return async (c, next) => {
    if (log === undefined) return next();
    const started = performance.now();
    try {
      await next();
    } finally {
      const fields: Record<string, unknown> = {
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
      };
      const requestId = c.res.headers.get("x-request-id") ?? c.req.header("x-request-id");
      if (requestId) fields.request_id = requestId;
      log("debug", "request", fields);
    }
  };
}
