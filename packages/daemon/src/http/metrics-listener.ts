import { createServer, type Server } from "node:http";
import { PROMETHEUS_CONTENT_TYPE } from "../metrics/prometheus-registry.js";
import { METRICS_PATH } from "./metrics-route.js";

/**
 * `telemetry.metrics_listen`: Prometheus metrics on an address of their own,
 * without a token, for a scraper on a private network. It serves GET /metrics
 * and nothing else, so opening it exposes no part of the API.
 */
export async function listenForMetrics(host: string, port: number, render: () => Promise<string>): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (path !== METRICS_PATH) {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end(`Only GET ${METRICS_PATH} is served here.\n`);
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" }).end(`${METRICS_PATH} takes GET.\n`);
      return;
    }
    render().then(
      (text) => res.writeHead(200, { "content-type": PROMETHEUS_CONTENT_TYPE }).end(req.method === "HEAD" ? undefined : text),
      (err: unknown) => {
        res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end(`The metrics could not be read: ${String(err)}\n`);
      },
    );
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

/** Serves `telemetry.metrics_listen` when config.yaml sets it; a failure names the setting. */
export async function listenForConfiguredMetrics(
  at: { host: string; port: number } | undefined,
  render: () => Promise<string>,
): Promise<Server | undefined> {
  if (!at) return undefined;
  try {
    return await listenForMetrics(at.host, at.port, render);
  } catch (err) {
    throw new Error(`config.yaml telemetry.metrics_listen (${at.host}:${at.port}): ${(err as Error).message}`, { cause: err });
  }
}

/** Where a metrics server can be scraped, for the log. */
export function metricsUrl(server: Server): string {
  const addr = server.address();
  if (typeof addr !== "object" || !addr) return String(addr);
  return `http://${addr.family === "IPv6" ? `[${addr.address}]` : addr.address}:${addr.port}${METRICS_PATH}`;
}
