import { createServer, type IncomingMessage, type Server } from "node:http";
import type { Duplex } from "node:stream";
import { getRequestListener } from "@hono/node-server";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { z } from "zod";
import { WardrikError } from "@wardrik/protocol";
import { ConfigError } from "../config/index.js";
import { accessLog, type Logger } from "../log/index.js";
import { VERSION } from "../version.js";
import { registerApiRoutes } from "./api-routes.js";
import { RouteTable, type ApiEnv } from "./route-table.js";
import type { ApiServices } from "./services.js";

export const MAX_BODY_BYTES = 2 * 1024 * 1024;
/** Past this a too-large body is not read to its end; the connection is closed instead. */
const DRAIN_LIMIT = 64 * 1024 * 1024;
export { VERSION } from "../version.js";

export interface HttpOptions {
  authenticate(token: string): Promise<{ org: string; admin: boolean } | undefined>;
  /** WebSocket upgrades (the worker gateway) by path. */
  upgrades?: Record<string, (req: IncomingMessage, socket: Duplex, head: Buffer) => void>;
  log?: Logger;
}

export function buildApp(svc: ApiServices, opts: HttpOptions): { app: Hono<ApiEnv>; routes: RouteTable } {
  const app = new Hono<ApiEnv>();
  const routes = new RouteTable(app);
  app.use("*", accessLog(opts.log));

  app.onError((err, c) => {
    const e = toWardrikError(err);
    if (e.code === "internal") opts.log?.("error", "request failed", { path: c.req.path, err: String(err) });
    return c.json(e.toJSON(), e.status as 400);
  });
  app.notFound((c) =>
    c.json(
      new WardrikError("not_found", `No route ${c.req.method} ${c.req.path}. The routes are listed at /v1/openapi.json.`).toJSON(),
      404,
    ),
  );
  app.use(
    "/v1/*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => c.json(new WardrikError("body_too_large", `The body is larger than ${MAX_BODY_BYTES} bytes.`).toJSON(), 413),
    }),
  );

  routes.add({
    method: "get",
    path: "/v1/health",
    summary: "Liveness; needs no token",
    public: true,
    handler: (c) => c.json({ ok: true, version: VERSION }),
  });
  routes.add({
    method: "get",
    path: "/v1/openapi.json",
    summary: "This document",
    public: true,
    handler: (c) => c.json(routes.openapi(VERSION)),
  });

  app.use("/v1/*", async (c, next) => {
    if (c.req.path === "/v1/health" || c.req.path === "/v1/openapi.json") return next();
    const header = c.req.header("authorization") ?? "";
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match)
      throw new WardrikError(
        "unauthorized",
        "Send a bearer token: Authorization: Bearer <token> (the local admin token is in .wardrik/admin-token).",
      );
    const who = await opts.authenticate(match[1]!);
    if (!who) throw new WardrikError("unauthorized", "The bearer token is not valid.");
    c.set("org", who.org);
    c.set("admin", who.admin);
    return next();
  });

  registerApiRoutes(routes, svc);
  return { app, routes };
}

export function toWardrikError(err: unknown): WardrikError {
  if (WardrikError.isInstance(err)) return err;
  if (err instanceof z.ZodError) {
    const detail = err.issues.map((i) => `${i.path.length ? i.path.join(".") : "body"}: ${i.message}`).join("; ");
    return new WardrikError("bad_request", `Invalid request: ${detail}`);
  }
  if (err instanceof ConfigError) return new WardrikError("bad_request", err.message);
  const status = (err as { status?: unknown }).status;
  if (status === 413) return new WardrikError("body_too_large", `The body is larger than ${MAX_BODY_BYTES} bytes.`);
  return new WardrikError("internal", `Internal error: ${err instanceof Error ? err.message : String(err)}`, { retryable: true });
}

export async function listen(app: Hono<ApiEnv>, host: string, port: number, opts: HttpOptions): Promise<Server> {
  const handle = getRequestListener(app.fetch);
  const server = createServer((req, res) => {
    // Answer a declared-too-large body at once but keep reading (and dropping)
    // it, so a client still uploading gets the 413 instead of a reset connection.
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > MAX_BODY_BYTES) {
      const body = JSON.stringify(new WardrikError("body_too_large", `The body is larger than ${MAX_BODY_BYTES} bytes.`).toJSON());
      if (declared > DRAIN_LIMIT) {
        res.writeHead(413, { "content-type": "application/json", connection: "close" }).end(body);
        return;
      }
      res.writeHead(413, { "content-type": "application/json" }).end(body);
      req.resume();
      return;
    }
    void handle(req, res);
  });
  server.on("upgrade", (req, socket, head) => {
    const path = (req.url ?? "").split("?")[0] ?? "";
    const handler = opts.upgrades?.[path];
    if (handler) handler(req, socket, head);
    else socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server;
}
