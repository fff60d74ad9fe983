import type { IncomingMessage } from "node:http";
import type { MiddlewareHandler } from "hono";
import type { ApiEnv } from "./api-env.js";

/** How long the rest of a refused body is read and dropped before the answer closes the connection instead. */
const DROP_UNREAD_MS = 5_000;

/**
 * A request answered before its body was read (a 401 from the token check, a
 * 404, a 405): the rest of the body is read and dropped before the answer is
 * sent, so the connection stays usable. The body's size is already bounded
 * (limitBody refuses a declared length over the limit before this). Without
 * it, @hono/node-server drains for at most 500 ms and then destroys the
 * socket, dropping the client's next request on the kept-alive connection;
 * and answering `Connection: close` at once resets a client still uploading,
 * which sees EPIPE instead of the answer. Only a body that does not arrive
 * within DROP_UNREAD_MS (or outside a node server) gets `Connection: close`.
 */
export function closeWhenBodyUnread(): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    await next();
    const announced = Number(c.req.header("content-length") ?? 0) > 0 || c.req.header("transfer-encoding") !== undefined;
    if (!announced || c.req.raw.bodyUsed) return;
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    if (incoming && (await dropRest(incoming, DROP_UNREAD_MS))) return;
    c.header("Connection", "close");
  };
}

/** Reads and drops what is left of a request body; true once it has all arrived within `ms`. */
function dropRest(incoming: IncomingMessage, ms: number): Promise<boolean> {
  if (incoming.readableEnded) return Promise.resolve(true);
  if (incoming.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ended: boolean) => {
      clearTimeout(timer);
      incoming.off("end", onEnd);
      incoming.off("close", onClose);
      incoming.off("error", onClose);
      resolve(ended);
    };
    const onEnd = () => done(true);
    const onClose = () => done(incoming.readableEnded);
    const timer = setTimeout(() => done(false), ms);
    incoming.on("end", onEnd);
    incoming.on("close", onClose);
    incoming.on("error", onClose);
    incoming.resume();
  });
}
