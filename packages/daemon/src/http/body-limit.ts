import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { ApiEnv } from "./api-env.js";

/**
 * The request body's size limit, judged without touching the body when the
 * request says its length: a Content-Length over the limit is refused, and a
 * request with neither Content-Length nor Transfer-Encoding has no body.
 * Only a chunked body is counted as it is read (hono's bodyLimit). Asking
 * for the body's stream turns @hono/node-server's light request into a full
 * fetch Request, for every request, GETs included; left alone, the handler
 * reads a JSON body straight from the socket.
 */
export function limitBody(maxSize: number, onError: (c: Context<ApiEnv>) => Response | Promise<Response>): MiddlewareHandler<ApiEnv> {
  const counted = bodyLimit({ maxSize, onError });
  return async (c, next) => {
    if (c.req.header("transfer-encoding") !== undefined) return counted(c, next);
    const length = c.req.header("content-length");
    if (length !== undefined && Number(length) > maxSize) return onError(c);
    await next();
  };
}
