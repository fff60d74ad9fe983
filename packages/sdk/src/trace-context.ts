import { createRequire } from "node:module";
import { parseTraceParent } from "@wardrik/protocol";

/**
 * The few parts of `@opentelemetry/api` the SDK uses. Written out here rather
 * than imported: the package is an optional peer dependency, so neither the
 * SDK's code nor its published types may need it.
 */
interface OtelApi {
  context: { active(): unknown; with<T>(ctx: unknown, fn: () => T): T };
  trace: { setSpanContext(ctx: unknown, spanContext: { traceId: string; spanId: string; traceFlags: number; isRemote: boolean }): unknown };
}

let api: OtelApi | null | undefined;

/** `@opentelemetry/api` if the worker's project has it, loaded the first time a call carries trace context. */
function otelApi(): OtelApi | null {
  if (api === undefined) {
    try {
      api = createRequire(import.meta.url)("@opentelemetry/api") as OtelApi;
    } catch {
      api = null;
    }
  }
  return api;
}

/**
 * Runs `fn` with the daemon's span for the call as the active OpenTelemetry
 * context, so whatever the tool traces joins the agent's trace. Without
 * `@opentelemetry/api`, or without a usable `traceparent`, `fn` just runs
 * (the value still reaches the tool as `ctx.traceparent`).
 */
export function runInTraceContext<T>(traceparent: string | undefined, fn: () => T): T {
  if (traceparent === undefined) return fn();
  const parent = parseTraceParent(traceparent);
  const otel = parent && otelApi();
  if (!parent || !otel) return fn();
  const ctx = otel.trace.setSpanContext(otel.context.active(), {
    traceId: parent.traceId,
    spanId: parent.spanId,
    traceFlags: parent.flags,
    isRemote: true,
  });
  return otel.context.with(ctx, fn);
}
