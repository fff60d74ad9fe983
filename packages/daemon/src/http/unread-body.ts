import type { MiddlewareHandler } from "hono";
import type { ApiEnv } from "./api-env.js";

/**
 * A request answered before its body was read (a 401 from the token check, a
 * 404, a 405) gets `Connection: close`: the connection ends with the answer.
 * Otherwise @hono/node-server drains the unread rest for at most 500 ms and
 * then destroys the socket, and a client that had reused the connection for
 * its next request (as fetch does) saw that request dropped: on a busy
 * daemon, after any refused upload of a megabyte or two.
 */
export function closeWhenBodyUnread(): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    await next();
    const announced = Number(c.req.header("content-length") ?? 0) > 0 || c.req.header("transfer-encoding") !== undefined;
    if (announced && !c.req.raw.bodyUsed) c.header("Connection", "close");
  };
}
