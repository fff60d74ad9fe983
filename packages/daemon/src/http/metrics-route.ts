import type { Hono } from "hono";
import { WardrikError } from "@wardrik/protocol";
import { PROMETHEUS_CONTENT_TYPE } from "../metrics/prometheus-registry.js";
import type { ApiEnv } from "./api-env.js";
import { bearerAuth, type Authenticate } from "./bearer-auth.js";

export const METRICS_PATH = "/metrics";

/**
 * `GET /metrics`: Prometheus text, behind the API's bearer auth. The metrics
 * cover every org, so only the admin token may read them; a scraper that
 * cannot hold it reads `telemetry.metrics_listen` instead (metrics-listener.ts).
 * Not in the OpenAPI document, which describes the JSON API under /v1.
 */
export function registerMetricsRoute(app: Hono<ApiEnv>, authenticate: Authenticate, render: () => Promise<string>): void {
  app.use(
    METRICS_PATH,
    bearerAuth(authenticate, () => false),
  );
  app.get(METRICS_PATH, async (c) => {
    if (!c.get("admin")) {
      throw new WardrikError(
        "unauthorized",
        "GET /metrics covers every org: scrape it with the admin token (.wardrik/admin-token), or from telemetry.metrics_listen in config.yaml.",
        { status: 403 },
      );
    }
    return c.body(await render(), 200, { "content-type": PROMETHEUS_CONTENT_TYPE });
  });
}
