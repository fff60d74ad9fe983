/**
 * The span sink (the SDK's BatchSpanProcessor and OTLP exporter) keeps the
 * OTEL_BSP_* meanings (a batch goes out full or after the scheduled delay);
 * what waits is sent at shutdown; unsampled spans and
 * attributes without a value are not sent; against a real OTLP receiver on
 * 127.0.0.1 that decodes each request.
 */
import { SpanKind } from "@opentelemetry/api";
import { defaultResource } from "@opentelemetry/resources";
import { afterEach, describe, expect, it } from "vitest";
import { RecordedSpan, type SpanSource } from "../../src/telemetry/recorded-span.js";
import { spanSink } from "../../src/telemetry/span-sinks.js";
import { startOtlpReceiver, type OtlpReceiver } from "../helpers/otlp-receiver.js";

const source: SpanSource = { resource: defaultResource(), scope: { name: "wardrik", version: "test" } };
let receiver: OtlpReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

function span(i: number, sampled = true): RecordedSpan {
  const s = new RecordedSpan(
    source,
    `span ${i}`,
    SpanKind.INTERNAL,
    "0af7651916cd43dd8448eb211c80319c",
    (i + 1).toString(16).padStart(16, "0"),
    undefined,
    Date.now(),
    { i, unset: undefined },
    sampled,
  );
  s.endMs = s.startMs + 1;
  return s;
}

function queue(
  url: string,
  batch: Partial<{ maxQueueSize: number; maxExportBatchSize: number; scheduledDelayMillis: number }>,
  protocol: "http/protobuf" | "http/json" = "http/protobuf",
) {
  return spanSink({
    url: `${url}/v1/traces`,
    headers: {},
    protocol,
    batch: { maxQueueSize: 100, maxExportBatchSize: 10, scheduledDelayMillis: 60_000, exportTimeoutMillis: 5000, ...batch },
  });
}

describe("the span sink", () => {
  it("sends a batch as soon as it is full, and the rest after the scheduled delay", async () => {
    receiver = await startOtlpReceiver();
    const q = queue(receiver.url, { maxExportBatchSize: 3, scheduledDelayMillis: 3000 });
    const started = Date.now();
    for (let i = 0; i < 7; i++) q.onEnd(span(i));
    q.onEnd(span(99, false)); // not sampled: never sent
    await receiver.waitForSpans((s) => s.length >= 6, "two full batches");
    // Full batches went out at once; the seventh span waits for the delay (3 s).
    expect(receiver.spans()).toHaveLength(6);
    const all = await receiver.waitForSpans((s) => s.length >= 7, "the last span, after the delay", 10_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2900);
    expect(receiver.contentTypes()).toEqual(["application/x-protobuf", "application/x-protobuf", "application/x-protobuf"]);
    expect(all.map((s) => s.name)).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `span ${i}`));
    expect(all[0]!.attributes).toEqual({ i: 0 });
    await q.shutdown();
  });

  it("sends what waits at shutdown, and takes no span after it", async () => {
    receiver = await startOtlpReceiver();
    const q = queue(receiver.url, {});
    for (let i = 0; i < 4; i++) q.onEnd(span(i));
    await q.shutdown();
    expect(receiver.spans().map((s) => s.name)).toEqual([0, 1, 2, 3].map((i) => `span ${i}`));
    q.onEnd(span(50));
    expect(receiver.spans()).toHaveLength(4);
  });

  it("sends http/json when the settings say so", async () => {
    receiver = await startOtlpReceiver();
    const q = queue(receiver.url, {}, "http/json");
    q.onEnd(span(1));
    await q.shutdown();
    expect(receiver.contentTypes()).toEqual(["application/json"]);
    expect(receiver.spans().map((s) => [s.name, s.attributes])).toEqual([["span 1", { i: 1 }]]);
  });
});
