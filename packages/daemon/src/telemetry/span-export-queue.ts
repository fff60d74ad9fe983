/**
 * Batches and exports spans over OTLP http/protobuf, in place of the SDK's
 * BatchSpanProcessor and serializer (the SDK's HTTP transport still sends:
 * its endpoint, headers, timeout, compression, TLS and retry settings from
 * the OTEL_EXPORTER_OTLP_* variables apply as they would to its exporter).
 *
 * A span is encoded the moment it ends, into the open batch's buffer outside
 * the JavaScript heap, and dropped: with the SDK's processor every span lived
 * until its batch went out, and the garbage collector copied each one
 * between generations, which with the serializer's own work cost a W1 turn
 * more than the spans themselves (bench/telemetry.ts). The OTEL_BSP_*
 * settings keep their meaning: a batch goes out when it holds
 * maxExportBatchSize spans or scheduledDelayMillis after its first span; at
 * most maxQueueSize spans wait, later ones are dropped (and a warning says
 * how many); one export is out at a time.
 *
 * States of a batch: open (taking spans) -> sealed (waiting for its turn) ->
 * out (being exported) -> done (sent, or failed and logged).
 */
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import { OTLPExporterBase } from "@opentelemetry/otlp-exporter-base";
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from "@opentelemetry/otlp-exporter-base/node-http";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { Logger } from "../log/logger.js";
import { encodeRequest, encodeSource, writeSpan, type EncodedSource } from "./otlp-span-encoding.js";
import { ProtobufWriter } from "./protobuf-writer.js";
import type { RecordedSpan, SpanSource } from "./recorded-span.js";
import type { TracingSettings } from "./tracing-settings.js";

/** What the tracing hands its ended spans to (this queue, or the SDK's BatchSpanProcessor for http/json). */
export interface SpanSink {
  onEnd(span: RecordedSpan): void;
  shutdown(): Promise<void>;
}

interface Batch {
  spans: Uint8Array;
  count: number;
}

/** The least size of a batch's buffer; later batches start at the size the last one reached. */
const MIN_BATCH_BYTES = 16 * 1024;
/** Dropped spans are reported at most this often. */
const DROP_WARNING_MS = 60_000;

export class SpanExportQueue implements SpanSink {
  private readonly exporter: OTLPExporterBase<Batch>;
  private readonly source: EncodedSource;
  private writer: ProtobufWriter;
  private openCount = 0;
  private readonly sealed: Batch[] = [];
  /** Spans sealed or out: with the open batch's, what maxQueueSize bounds. */
  private waiting = 0;
  private out: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private dropped = 0;
  /** Spans whose export failed (counted for shutdown's answer). */
  private failed = 0;
  private lastDropWarning = 0;
  private closed = false;
  /** Shutdown gave up waiting: nothing more is sent. */
  private abandoned = false;

  constructor(
    source: SpanSource,
    private readonly settings: Pick<TracingSettings, "url" | "headers" | "batch">,
    private readonly log: Logger,
  ) {
    this.source = encodeSource(source);
    this.writer = new ProtobufWriter(MIN_BATCH_BYTES);
    const encoded = this.source;
    const delegate = createOtlpHttpExportDelegate(
      convertLegacyHttpOptions({ url: settings.url, headers: settings.headers }, "TRACES", "v1/traces", {
        "Content-Type": "application/x-protobuf",
      }),
      {
        serializeRequest: (batch: Batch) => encodeRequest(encoded, batch.spans),
        deserializeResponse: (data: Uint8Array) => ProtobufTraceSerializer.deserializeResponse(data),
      },
      "otlp_http_span_exporter",
      { name: "span", countItems: (batch: Batch) => batch.count },
      undefined,
    );
    this.exporter = new OTLPExporterBase(delegate);
  }

  onEnd(span: RecordedSpan): void {
    if (this.closed || !span.sampled) return;
    if (this.waiting + this.openCount >= this.settings.batch.maxQueueSize) return this.drop();
    writeSpan(this.writer, span);
    this.openCount++;
    if (this.openCount >= this.settings.batch.maxExportBatchSize) {
      this.seal();
      this.next();
    } else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.seal();
        this.next();
      }, this.settings.batch.scheduledDelayMillis);
      this.timer.unref();
    }
  }

  /** Sends every span taken so far; resolves when they are sent or failed. */
  async flush(): Promise<void> {
    this.seal();
    while (this.out || this.sealed.length > 0) {
      this.next();
      await this.out;
    }
  }

  /**
   * Sends what is left, within exportTimeoutMillis in all; rejects when some
   * spans could not be sent (the caller logs it: a stopping daemon does not
   * wait on a collector that is down).
   */
  async shutdown(): Promise<void> {
    this.closed = true;
    const failedBefore = this.failed;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), this.settings.batch.exportTimeoutMillis)));
    try {
      const ended = await Promise.race([this.flush().then(() => this.exporter.shutdown()), deadline]);
      if (ended === "late") {
        // What is still waiting is dropped: no export goes on after the daemon stopped.
        this.abandoned = true;
        this.sealed.length = 0;
        throw new Error(`spans were still being exported after ${this.settings.batch.exportTimeoutMillis} ms`);
      }
      if (this.failed > failedBefore) throw new Error(`${this.failed - failedBefore} span(s) could not be exported`);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Open -> sealed. */
  private seal(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.openCount === 0) return;
    const bytes = this.writer.bytes();
    this.sealed.push({ spans: bytes, count: this.openCount });
    this.waiting += this.openCount;
    this.openCount = 0;
    this.writer = new ProtobufWriter(Math.max(MIN_BATCH_BYTES, bytes.length));
  }

  /** Sealed -> out, when none is. */
  private next(): void {
    if (this.out || this.abandoned) return;
    const batch = this.sealed.shift();
    if (!batch) return;
    this.out = new Promise<void>((resolve) => {
      // An export that takes longer than exportTimeoutMillis counts as failed, and the next batch goes out.
      const timer = setTimeout(
        () => done({ code: ExportResultCode.FAILED, error: new Error("the export timed out") }),
        this.settings.batch.exportTimeoutMillis,
      );
      timer.unref();
      let settled = false;
      const done = (result: ExportResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (result.code !== ExportResultCode.SUCCESS) {
          this.failed += batch.count;
          if (!this.closed)
            this.log("warn", "OpenTelemetry: exporting spans failed; they are dropped", {
              spans: batch.count,
              err: result.error ? result.error.message : "unknown",
            });
        }
        resolve();
      };
      this.exporter.export(batch, done);
    }).finally(() => {
      this.waiting -= batch.count;
      this.out = undefined;
      this.next();
    });
  }

  private drop(): void {
    this.dropped++;
    const now = Date.now();
    if (now - this.lastDropWarning < DROP_WARNING_MS) return;
    this.lastDropWarning = now;
    this.log("warn", "OpenTelemetry: the span queue is full (OTEL_BSP_MAX_QUEUE_SIZE); spans are dropped", {
      dropped: this.dropped,
      max_queue_size: this.settings.batch.maxQueueSize,
    });
  }
}

/**
 * http/json: the SDK's BatchSpanProcessor and JSON exporter. Attribute keys a
 * span never got a value for (they are in its attributes from the start, see
 * otel-parts.ts) are removed first, as the protobuf encoder leaves them out.
 */
export function jsonSpanSink(settings: Pick<TracingSettings, "url" | "headers" | "batch">): SpanSink {
  const processor = new BatchSpanProcessor(new JsonTraceExporter({ url: settings.url, headers: settings.headers }), settings.batch);
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
