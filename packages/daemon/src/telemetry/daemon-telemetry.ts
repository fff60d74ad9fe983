import type { Server } from "node:http";
import type { TelemetrySettings } from "../config/integration-schemas.js";
import { listenForConfiguredMetrics, metricsUrl } from "../http/metrics-listener.js";
import type { Logger } from "../log/logger.js";
import type { WardrikMetrics } from "../metrics/wardrik-metrics.js";
import { MetricsQueries } from "../store/metrics-queries.js";
import { startTracing, type DaemonTracing, type TracingDeps } from "./start-tracing.js";

export interface TelemetryDeps extends TracingDeps {
  metrics: WardrikMetrics;
  /** Open worker connections by org, read at scrape time. */
  workerConnections: () => ReadonlyMap<string, number>;
  /** Makes a value a known secret (an exporter's API key in OTEL_EXPORTER_OTLP_HEADERS). */
  addSecret: (value: string) => void;
}

/** The daemon's traces and metrics together: started with the runtime, stopped after it. */
export interface DaemonTelemetry {
  readonly tracing: DaemonTracing;
  /** Serves `telemetry.metrics_listen` when config.yaml sets it. */
  listen(log: Logger): Promise<void>;
  /** Exports the spans of turns that just stopped, and any still buffered; stops the metrics listener. */
  close(): Promise<void>;
}

export async function startDaemonTelemetry(
  config: TelemetrySettings | undefined,
  env: NodeJS.ProcessEnv,
  deps: TelemetryDeps,
): Promise<DaemonTelemetry> {
  const tracing = await startTracing(config, env, deps);
  for (const value of Object.values(tracing.settings?.headers ?? {})) deps.addSecret(value);
  const { metrics } = deps;
  metrics.attach({
    bus: deps.bus,
    queries: new MetricsQueries(deps.store.db),
    workerConnections: deps.workerConnections,
    version: deps.version,
  });
  let server: Server | undefined;
  const telemetry: DaemonTelemetry = {
    tracing,
    async listen(log) {
      server = await listenForConfiguredMetrics(config?.metrics_listen, () => metrics.render());
      if (server) log("info", "serving metrics", { url: metricsUrl(server) });
    },
    async close() {
      await tracing.shutdown();
      metrics.close();
      server?.close();
    },
  };
  return telemetry;
}
