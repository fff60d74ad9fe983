/**
 * Where ended spans go: the SDK's BatchSpanProcessor with its OTLP exporter,
 * over http/protobuf (the default) or http/json. The OTEL_BSP_* settings and
 * the OTEL_EXPORTER_OTLP_* variables (timeout, compression, TLS) apply as the
 * SDK defines them.
 *
 * Until issue #34 a hand-written queue and protobuf encoder stood here (each
 * span encoded as it ended, outside the heap); side by side with the SDK's
 * processor and serializer on the same path (`npm run bench -- otlp-spans`
 * in that change) the SDK's cost 1.0x to 1.3x its CPU per span, under the 2x
 * that keeping hand-written code needs (README, Architecture).
 */
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { RecordedSpan } from "./recorded-span.js";
import type { TracingSettings } from "./tracing-settings.js";

/** What the tracing hands its ended spans to. */
export interface SpanSink {
  onEnd(span: RecordedSpan): void;
  shutdown(): Promise<void>;
}

/**
 * The SDK's BatchSpanProcessor and OTLP exporter for the settings' protocol.
 * Attribute keys a span never got a value for (they are in its attributes
 * from the start, see otel-parts.ts) are removed first: they are not sent.
 */
export function spanSink(settings: Pick<TracingSettings, "url" | "headers" | "batch" | "protocol">): SpanSink {
  const options = { url: settings.url, headers: settings.headers };
  const exporter: SpanExporter = settings.protocol === "http/json" ? new JsonTraceExporter(options) : new ProtobufTraceExporter(options);
  const processor = new BatchSpanProcessor(exporter, settings.batch);
  return {
    onEnd(span) {
      if (!span.sampled) return;
      const a = span.attributes;
      for (const key in a) if (a[key] === undefined) delete a[key];
      processor.onEnd(span);
    },
    shutdown: () => processor.shutdown(),
  };
}
