import type { TelemetrySettings } from "../config/integration-schemas.js";
import type { EventBus } from "../events/event-bus.js";
import type { Logger } from "../log/logger.js";
import { noTelemetry, type Telemetry } from "../runtime/telemetry.js";
import type { Store } from "../store/store.js";
import { resolveTracing, type TracingSettings } from "./tracing-settings.js";

export interface TracingDeps {
  store: Store;
  /** The bus the store publishes committed events on (turn ends close their traces). */
  bus: EventBus;
  log: Logger;
  /** Blanks known secrets from captured content. */
  redact: (text: string) => string;
  version: string;
  /** This daemon's node name (`--node`): the `wardrik.node` resource attribute, so a cluster's spans say who wrote them. */
  node?: string;
}

/** The daemon's traces: what the engine reports to, and how log lines find the active span. */
export interface DaemonTracing {
  readonly telemetry: Telemetry;
  /** Undefined when tracing is off. */
  readonly settings: TracingSettings | undefined;
  /** `trace_id` and `span_id` for a log line with these fields: of the turn it names (`run`), if traced. */
  logFields(fields: Record<string, unknown> | undefined): Record<string, string> | undefined;
  /** Exports what is buffered. */
  shutdown(): Promise<void>;
}

const OFF: DaemonTracing = {
  telemetry: noTelemetry,
  settings: undefined,
  logFields: () => undefined,
  shutdown: () => Promise.resolve(),
};

/**
 * Starts tracing when config.yaml or the OTEL_* variables ask for it. When
 * they do not, the OpenTelemetry SDK is never loaded and the engine reports
 * to a no-op: tracing that is off costs nothing.
 */
export async function startTracing(
  config: TelemetrySettings | undefined,
  env: NodeJS.ProcessEnv,
  deps: TracingDeps,
): Promise<DaemonTracing> {
  const { settings, warnings } = resolveTracing(config, env);
  for (const w of warnings) deps.log("warn", w);
  if (!settings) return OFF;
  const { createOtelTracing } = await import("./otel-tracing.js");
  deps.log("info", "exporting traces", { url: withoutCredentials(settings.url), protocol: settings.protocol, sampler: settings.sampler });
  return createOtelTracing(settings, deps);
}

/** A URL as a log line may show it: without user and password (the query may hold a key too). */
function withoutCredentials(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}`;
}
