/**
 * OTLP/protobuf encoding of Wardrik's spans (opentelemetry-proto
 * trace/v1): each span is encoded when it ends, as one `spans` entry of a
 * ScopeSpans message, and a batch is the concatenation of those entries. A
 * request wraps a batch with the resource and the scope, both encoded once
 * for the process. The field numbers and value rules (a safe integer is an
 * int_value, any other number a double_value; kind is the API's kind plus one;
 * flags carry the sampled bit and whether the parent is remote) are the ones
 * the OpenTelemetry SDK's serializer follows: a test decodes both and
 * compares them (test/telemetry/otlp-span-encoding.test.ts).
 */
import { SpanStatusCode, type AttributeValue, type Attributes } from "@opentelemetry/api";
import { ProtobufWriter, varintSize } from "./protobuf-writer.js";
import type { RecordedSpan, SpanSource } from "./recorded-span.js";

const LEN = 2;
const VARINT = 0;
const I64 = 1;
const I32 = 5;
/** ScopeSpans.spans: the field every encoded span is written as. */
const SCOPE_SPANS_SPANS = 2;
const FLAG_HAS_IS_REMOTE = 0x100;
const FLAG_IS_REMOTE = 0x200;

/** Appends `span` to `w` as a ScopeSpans.spans entry. */
export function writeSpan(w: ProtobufWriter, span: RecordedSpan): void {
  w.tag(SCOPE_SPANS_SPANS, LEN);
  const start = w.begin();
  w.tag(1, LEN);
  w.hexBytes(span.traceId);
  w.tag(2, LEN);
  w.hexBytes(span.spanId);
  const parent = span.parentSpanContext;
  if (parent?.spanId) {
    w.tag(4, LEN);
    w.hexBytes(parent.spanId);
  }
  w.tag(5, LEN);
  w.string(span.name);
  w.tag(6, VARINT);
  w.varint(span.kind + 1);
  w.tag(7, I64);
  w.unixNanos(span.startMs);
  w.tag(8, I64);
  w.unixNanos(span.endMs);
  writeAttributes(w, 9, span.attributes);
  if (span.status.code !== SpanStatusCode.UNSET) {
    w.tag(15, LEN);
    const status = w.begin();
    if (span.status.message) {
      w.tag(2, LEN);
      w.string(span.status.message);
    }
    w.tag(3, VARINT);
    w.varint(span.status.code);
    w.end(status);
  }
  w.tag(16, I32);
  w.fixed32((span.sampled ? 1 : 0) | FLAG_HAS_IS_REMOTE | (parent?.isRemote ? FLAG_IS_REMOTE : 0));
  w.end(start);
}

/** Repeated KeyValue `field`; undefined and null values are left out. */
function writeAttributes(w: ProtobufWriter, field: number, attributes: Attributes): void {
  for (const key in attributes) {
    const value = attributes[key];
    if (value === undefined || value === null) continue;
    w.tag(field, LEN);
    const kv = w.begin();
    w.tag(1, LEN);
    w.string(key);
    w.tag(2, LEN);
    const any = w.begin();
    writeAnyValue(w, value);
    w.end(any);
    w.end(kv);
  }
}

/** The inside of an AnyValue. */
function writeAnyValue(w: ProtobufWriter, value: AttributeValue | null | undefined): void {
  switch (typeof value) {
    case "string":
      w.tag(1, LEN);
      w.string(value);
      return;
    case "boolean":
      w.tag(2, VARINT);
      w.varint(value ? 1 : 0);
      return;
    case "number":
      if (Number.isSafeInteger(value)) {
        w.tag(3, VARINT);
        w.int64(value);
      } else {
        w.tag(4, I64);
        w.double(value);
      }
      return;
    default:
      if (Array.isArray(value)) {
        w.tag(5, LEN);
        const array = w.begin();
        for (const item of value as (AttributeValue | null | undefined)[]) {
          w.tag(1, LEN);
          const v = w.begin();
          if (item !== null && item !== undefined) writeAnyValue(w, item);
          w.end(v);
        }
        w.end(array);
      }
  }
}

/** What every request of this process starts with: ResourceSpans.resource and ScopeSpans.scope, encoded. */
export interface EncodedSource {
  resource: Buffer;
  scope: Buffer;
}

export function encodeSource(source: SpanSource): EncodedSource {
  const r = new ProtobufWriter(1024);
  r.tag(1, LEN); // ResourceSpans.resource
  const resource = r.begin();
  writeAttributes(r, 1, source.resource.attributes);
  r.end(resource);
  const s = new ProtobufWriter(256);
  s.tag(1, LEN); // ScopeSpans.scope
  const scope = s.begin();
  s.tag(1, LEN);
  s.string(source.scope.name);
  if (source.scope.version) {
    s.tag(2, LEN);
    s.string(source.scope.version);
  }
  s.end(scope);
  return { resource: Buffer.from(r.bytes()), scope: Buffer.from(s.bytes()) };
}

/** An ExportTraceServiceRequest of one batch of encoded spans (`spans`: ScopeSpans.spans entries). */
export function encodeRequest(source: EncodedSource, spans: Uint8Array): Uint8Array {
  const scopeSpans = source.scope.length + spans.length;
  const resourceSpans = source.resource.length + 1 + varintSize(scopeSpans) + scopeSpans;
  const head = new ProtobufWriter(32 + source.resource.length + source.scope.length);
  head.tag(1, LEN); // ExportTraceServiceRequest.resource_spans
  head.varint(resourceSpans);
  head.raw(source.resource);
  head.tag(2, LEN); // ResourceSpans.scope_spans
  head.varint(scopeSpans);
  head.raw(source.scope);
  const out = new Uint8Array(head.pos + spans.length);
  out.set(head.bytes(), 0);
  out.set(spans, head.pos);
  return out;
}
