import { Hono } from "hono";
import { DEFAULT_JSON_DEPTH, Health, WardrikError } from "@wardrik/protocol";
import { IdempotencyKeys } from "../store/idempotency-keys.js";
import { VERSION } from "../version.js";
import { registerAdminRoutes } from "./admin-routes.js";
import type { ApiEnv } from "./api-env.js";
import { registerApiRoutes } from "./api-routes.js";
import { bearerAuth } from "./bearer-auth.js";
import { serveConsole } from "./console-files.js";
import { registerConsoleRoutes } from "./console-routes.js";
import { registerEventRoutes } from "./event-routes.js";
import { registerTurnRoutes } from "./turn-routes.js";
import { registerDeliveryRoutes } from "./delivery-routes.js";
import { registerFeedRoutes } from "./feed-routes.js";
import { registerHookRoutes } from "./hook-routes.js";
import { registerNodeRoutes } from "./node-routes.js";
import { registerClusterRoutes } from "./cluster-routes.js";
import { idempotency } from "./idempotency.js";
import { orgFairShare } from "./org-fair-share.js";
import { OrgRateLimiter, orgRateLimit } from "./org-rate-limit.js";
import { registerMcpEndpoint } from "./mcp-endpoint.js";
import { registerMcpServerRoutes } from "./mcp-server-routes.js";
import { bodyTooLarge, errorResponse, toWardrikError } from "./http-errors.js";
import type { HttpOptions } from "./http-options.js";
import { MAX_BODY_BYTES } from "./limits.js";
import { buildDocument } from "./openapi-document.js";
import { registerMetricsRoute } from "./metrics-route.js";
import { requestIds } from "./request-id.js";
import { closeWhenBodyUnread } from "./unread-body.js";
import { limitBody } from "./body-limit.js";
import { RouteTable } from "./route-table.js";
import type { ApiServices } from "./services.js";
import { registerToolRoutes } from "./tool-routes.js";
import { registerTimeMachineRoutes } from "./time-machine-routes.js";
import { registerSlackRoutes } from "../slack/slack-routes.js";

export { listen } from "./http-listener.js";
export { MAX_BODY_BYTES } from "./limits.js";
export { toWardrikError } from "./http-errors.js";
export { VERSION } from "../version.js";

export type { HttpOptions } from "./http-options.js";

export function buildApp(svc: ApiServices, opts: HttpOptions): { app: Hono<ApiEnv>; routes: RouteTable } {
  // A plain Hono app: every route validates through RouteTable, and the OpenAPI document is made on request.
  const app = new Hono<ApiEnv>();
  const routes = new RouteTable(app);

  app.onError((err, c) => {
    const e = toWardrikError(err);
    if (e.code === "internal")
      opts.log?.("error", "request failed", { request_id: c.get("requestId"), path: c.req.path, err: String(err) });
    return errorResponse(c, e);
  });
  app.notFound((c) => {
    const allowed = routes.allowedMethods(c.req.path);
    if (allowed.length > 0) {
      return errorResponse(
        c,
        new WardrikError(
          "method_not_allowed",
          `${c.req.method} is not allowed on ${c.req.path}; it takes ${allowed.join(", ")}. The routes are listed at /v1/openapi.json.`,
        ),
        { Allow: allowed.join(", ") },
      );
    }
    return errorResponse(
      c,
      new WardrikError("not_found", `No route ${c.req.method} ${c.req.path}. The routes are listed at /v1/openapi.json.`),
    );
  });

  app.use("*", requestIds(opts.log));
  app.use("*", closeWhenBodyUnread());
  const jsonDepth = opts.jsonDepth ?? DEFAULT_JSON_DEPTH;
  app.use("*", async (c, next) => {
    c.set("jsonDepth", jsonDepth);
    await next();
  });
  app.use(
    "/v1/*",
    limitBody(MAX_BODY_BYTES, (c) => errorResponse(c, bodyTooLarge())),
  );
  app.use(
    "/v1/*",
    bearerAuth(opts.authenticate, (path) => routes.isPublic(path)),
  );
  // Before the rate limit: an org's refused requests wait its turn too, not ahead of another org's work.
  if (opts.fairShare) app.use("/v1/*", orgFairShare(opts.fairShare));
  if (opts.orgRequestsPerS !== undefined) app.use("/v1/*", orgRateLimit(new OrgRateLimiter(opts.orgRequestsPerS)));
  app.use("/v1/*", idempotency(new IdempotencyKeys(svc.store.db)));

  routes.add({
    method: "get",
    path: "/v1/health",
    operationId: "getHealth",
    tags: ["meta"],
    summary: "Liveness; needs no token",
    public: true,
    response: Health,
    handler: (c) => c.json({ ok: true, version: VERSION }),
  });
  let document: Promise<unknown> | undefined;
  routes.add({
    method: "get",
    path: "/v1/openapi.json",
    operationId: "getOpenApiDocument",
    tags: ["meta"],
    summary: "This document (OpenAPI 3.1)",
    public: true,
    handler: async (c) => {
      document ??= buildDocument(routes.describedRoutes(), VERSION).catch((err: unknown) => {
        document = undefined;
        throw err;
      });
      return c.json((await document) as object);
    },
  });

  if (opts.metrics) registerMetricsRoute(app, opts.authenticate, opts.metrics);
  registerApiRoutes(routes, svc);
  registerEventRoutes(routes, svc);
  registerTurnRoutes(routes, svc);
  registerFeedRoutes(routes, svc);
  registerNodeRoutes(routes, svc);
  if (svc.cluster) registerClusterRoutes(routes, svc.cluster);
  registerAdminRoutes(routes, svc);
  registerToolRoutes(routes, svc);
  registerTimeMachineRoutes(routes, svc);
  registerDeliveryRoutes(routes, svc);
  registerHookRoutes(routes, svc);
  registerSlackRoutes(routes, svc);
  registerMcpServerRoutes(routes, svc);
  registerMcpEndpoint(app, svc);
  registerConsoleRoutes(routes, svc, opts.authenticate);
  // Last: the console's files answer what no route above did.
  serveConsole(app);
  return { app, routes };
}
