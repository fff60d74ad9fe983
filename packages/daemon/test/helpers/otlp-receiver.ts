/**
 * An OTLP/HTTP trace receiver for tests: a real HTTP server on 127.0.0.1 that
 * accepts what an OpenTelemetry exporter POSTs to /v1/traces, as
 * http/protobuf (decoded with the OTLP message definitions below) or
 * http/json, and keeps every span in one normalized shape.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import protobuf from "protobufjs";
import { waitFor } from "./wait.js";

/**
 * The part of opentelemetry/proto (collector/trace/v1, trace/v1, common/v1,
 * resource/v1) an exporter's request uses, with the field numbers of the
 * published definitions.
 */
const OTLP_PROTO = `
syntax = "proto3";
package otlp;
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  string trace_state = 3;
  bytes parent_span_id = 4;
  fixed32 flags = 16;
  string name = 5;
  int32 kind = 6;
  fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9;
  uint32 dropped_attributes_count = 10;
  repeated Event events = 11;
  uint32 dropped_events_count = 12;
  repeated Link links = 13;
  uint32 dropped_links_count = 14;
  Status status = 15;
  message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
  message Link { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; repeated KeyValue attributes = 4; uint32 dropped_attributes_count = 5; fixed32 flags = 6; }
}
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    KeyValueList kvlist_value = 6;
    bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
`;

const ExportRequest = protobuf.parse(OTLP_PROTO, { keepCase: false }).root.lookupType("otlp.ExportTraceServiceRequest");

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Undefined for a root span. */
  parentSpanId: string | undefined;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, unknown>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  links: { traceId: string; spanId: string }[];
  resource: Record<string, unknown>;
  /** How it arrived. */
  encoding: "protobuf" | "json";
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  url: string;
  spans(): ReceivedSpan[];
  /** Content types of the requests received. */
  contentTypes(): string[];
  /** Polls until `match` holds for the spans received so far; returns them. */
  waitForSpans(match: (spans: ReceivedSpan[]) => boolean, what: string, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  const types: string[] = [];
  const server: Server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim();
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404).end();
        return;
      }
      types.push(type);
      try {
        if (type === "application/x-protobuf") {
          received.push(...fromProtobuf(body));
          res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
        } else if (type === "application/json") {
          received.push(...fromJson(JSON.parse(body.toString("utf8")) as JsonRequest));
          res.writeHead(200, { "content-type": "application/json" }).end("{}");
        } else {
          res.writeHead(415).end();
        }
      } catch (err) {
        res.writeHead(400, { "content-type": "text/plain" }).end(String(err));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const addr = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${addr.port}`,
    spans: () => [...received],
    contentTypes: () => [...types],
    async waitForSpans(match, what, timeoutMs = 20_000) {
      await waitFor(() => match(received), `${what}; spans so far: ${received.map((s) => s.name).join(", ") || "none"}`, timeoutMs);
      return [...received];
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

// ---- http/protobuf ----

interface PbAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string;
  doubleValue?: number;
  arrayValue?: { values?: PbAnyValue[] };
  bytesValue?: Uint8Array;
}
interface PbKeyValue {
  key: string;
  value?: PbAnyValue;
}
interface PbSpan {
  traceId: Uint8Array;
  spanId: Uint8Array;
  parentSpanId?: Uint8Array;
  name: string;
  kind?: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: PbKeyValue[];
  links?: { traceId: Uint8Array; spanId: Uint8Array }[];
  status?: { code?: number; message?: string };
}

/** A whole ExportTraceServiceRequest as plain data (IDs in base64, 64-bit numbers as strings, defaults filled in). */
export function decodeTraceRequest(body: Uint8Array): Record<string, unknown> {
  return ExportRequest.toObject(ExportRequest.decode(body), { longs: String, bytes: String, defaults: true });
}

function fromProtobuf(body: Buffer): ReceivedSpan[] {
  const message = ExportRequest.toObject(ExportRequest.decode(body), { longs: String, defaults: false }) as {
    resourceSpans?: { resource?: { attributes?: PbKeyValue[] }; scopeSpans?: { spans?: PbSpan[] }[] }[];
  };
  const out: ReceivedSpan[] = [];
  for (const rs of message.resourceSpans ?? []) {
    const resource = pbAttributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const parent = s.parentSpanId && s.parentSpanId.length > 0 ? hex(s.parentSpanId) : undefined;
        out.push({
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: parent,
          name: s.name,
          kind: s.kind ?? 0,
          startMs: Number(BigInt(s.startTimeUnixNano) / 1_000_000n),
          endMs: Number(BigInt(s.endTimeUnixNano) / 1_000_000n),
          attributes: pbAttributes(s.attributes),
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? "" },
          links: (s.links ?? []).map((l) => ({ traceId: hex(l.traceId), spanId: hex(l.spanId) })),
          resource,
          encoding: "protobuf",
        });
      }
    }
  }
  return out;
}

function pbAttributes(kvs: PbKeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((kvs ?? []).map((kv) => [kv.key, pbValue(kv.value)]));
}

function pbValue(v: PbAnyValue | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(pbValue);
  if (v.bytesValue !== undefined) return hex(v.bytesValue);
  return undefined;
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("hex");
}

// ---- http/json ----

interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonAnyValue[] };
}
interface JsonKeyValue {
  key: string;
  value?: JsonAnyValue;
}
interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes?: JsonKeyValue[];
  links?: { traceId: string; spanId: string }[];
  status?: { code?: number; message?: string };
}
interface JsonRequest {
  resourceSpans?: { resource?: { attributes?: JsonKeyValue[] }; scopeSpans?: { spans?: JsonSpan[] }[] }[];
}

function fromJson(message: JsonRequest): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of message.resourceSpans ?? []) {
    const resource = jsonAttributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: jsonId(s.traceId),
          spanId: jsonId(s.spanId),
          parentSpanId: s.parentSpanId ? jsonId(s.parentSpanId) : undefined,
          name: s.name,
          kind: s.kind ?? 0,
          startMs: Number(BigInt(s.startTimeUnixNano) / 1_000_000n),
          endMs: Number(BigInt(s.endTimeUnixNano) / 1_000_000n),
          attributes: jsonAttributes(s.attributes),
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? "" },
          links: (s.links ?? []).map((l) => ({ traceId: jsonId(l.traceId), spanId: jsonId(l.spanId) })),
          resource,
          encoding: "json",
        });
      }
    }
  }
  return out;
}

/** OTLP/JSON writes IDs as hex (the specification); base64 is accepted too, as some exporters send it. */
function jsonId(id: string): string {
  return /^[0-9a-f]+$/i.test(id) && (id.length === 32 || id.length === 16) ? id.toLowerCase() : Buffer.from(id, "base64").toString("hex");
}

function jsonAttributes(kvs: JsonKeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((kvs ?? []).map((kv) => [kv.key, jsonValue(kv.value)]));
}

function jsonValue(v: JsonAnyValue | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(jsonValue);
  return undefined;
}
