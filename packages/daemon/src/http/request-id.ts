import { randomUUID } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import type { ApiEnv } from "./api-env.js";
import type { HttpLog } from "./http-options.js";

/**
 * IDs a client may choose: short, printable, no spaces or quotes, so they are
 * safe in a header and a log line. Anything else is replaced, not trusted.
 */
const SANE = /^[A-Za-z0-9][A-Za-z0-9._:@+/=-]{0,127}$/;

/** The client's X-Request-Id when it is usable, else a new one. */
export function requestIdFor(header: string | undefined | null): string {
  return header && SANE.test(header) ? header : `req_${randomUUID()}`;
}

/**
 * First middleware of every request: gives it an ID, returns that ID on the
 * answer, and writes one access log line with it. HEAD answers get the
 * Content-Length their GET body would have, as RFC 9110 asks.
 */
export function requestIds(log: HttpLog | undefined): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const id = requestIdFor(c.req.header("x-request-id"));
    c.set("requestId", id);
    const started = performance.now();
    // Before the handler, so that the answer is made with it: a header set on a finished answer makes
    // @hono/node-server build a full fetch Response, and hono copy it, for every request.
    c.header("X-Request-Id", id);
    await next();
    // An answer made without the context's headers (a Response of its own) gets it now.
    if (c.res.headers.get("x-request-id") !== id) c.header("X-Request-Id", id);
    if (c.req.method === "HEAD" && c.res.body && !c.res.headers.has("content-length") && !isStream(c.res)) {
      c.header("Content-Length", String((await c.res.clone().arrayBuffer()).byteLength));
    }
    log?.("debug", "request", {
      request_id: id,
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
    });
  };
}

function isStream(res: Response): boolean {
  return (res.headers.get("content-type") ?? "").startsWith("text/event-stream");
}
