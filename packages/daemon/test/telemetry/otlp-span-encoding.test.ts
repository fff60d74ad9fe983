/**
 * Wardrik encodes its spans for OTLP http/protobuf itself (span-export-queue.ts).
 * The same spans encoded by it and by the OpenTelemetry SDK's serializer must
 * decode, with the published message definitions (protobufjs), to the same
 * request: every field, every attribute type, long and non-ASCII strings
 * (lengths of more than one byte), and batches larger than the first buffer.
 */
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
import { describe, expect, it } from "vitest";
import { encodeRequest, encodeSource, writeSpan } from "../../src/telemetry/otlp-span-encoding.js";
import { ProtobufWriter } from "../../src/telemetry/protobuf-writer.js";
import { RecordedSpan, type SpanSource } from "../../src/telemetry/recorded-span.js";
import { decodeTraceRequest } from "../helpers/otlp-receiver.js";

const source: SpanSource = {
  resource: defaultResource().merge(resourceFromAttributes({ "service.name": "wardrik-test", "wardrik.node": "n1", "deploy.count": 3 })),
  scope: { name: "wardrik", version: "0.1.0" },
};
const TRACE = "0af7651916cd43dd8448eb211c80319c";

function spans(): RecordedSpan[] {
  const parent = { traceId: TRACE, spanId: "b7ad6b7169203331", traceFlags: 1, isRemote: true };
  const root = new RecordedSpan(
    source,
    "invoke_agent triage",
    SpanKind.INTERNAL,
    TRACE,
    "b7ad6b7169203331",
    undefined,
    1764600000123.25,
    {
      "gen_ai.agent.name": "triage",
      "wardrik.turn.spend_usd": 0.000125,
    },
    true,
  );
  root.endMs = 1764600001999.999999;
  const chat = new RecordedSpan(
    source,
    "chat gpt-4o-mini",
    SpanKind.CLIENT,
    TRACE,
    "00f067aa0ba902b7",
    parent,
    1764600000200.5,
    {
      "gen_ai.usage.input_tokens": 1234,
      "gen_ai.response.finish_reasons": ["tool-calls", "stop"],
      "wardrik.flag": true,
      "wardrik.negative": -42,
      "wardrik.mixed": [1, 2.5, 3],
      "gen_ai.input.messages": `[{"role":"user","parts":[{"type":"text","content":"${"ünïcødé ✓ ".repeat(40)}"}]}]`,
    },
    true,
  );
  chat.endMs = chat.startMs + 12.345678;
  const tool = new RecordedSpan(
    source,
    "execute_tool refund — ✓",
    SpanKind.INTERNAL,
    TRACE,
    "00f067aa0ba902b8",
    parent,
    1764600000300,
    {
      "gen_ai.tool.name": "refund",
      ["x".repeat(200)]: "y".repeat(20_000),
    },
    true,
  );
  tool.endMs = tool.startMs + 1;
  tool.failed("tool_error", "the card was declined");
  const denied = new RecordedSpan(
    source,
    "execute_tool wipe",
    SpanKind.INTERNAL,
    TRACE,
    "00f067aa0ba902b9",
    parent,
    1764600000301,
    {
      "gen_ai.tool.name": "wipe",
    },
    true,
  );
  denied.failed("denied");
  return [root, chat, tool, denied];
}

/** Fields the SDK writes with their default value, and Wardrik leaves out, made alike. */
function normalize(request: Record<string, unknown>): unknown {
  const r = request as { resourceSpans: { scopeSpans: { spans: { status: unknown }[] }[] }[] };
  for (const rs of r.resourceSpans) for (const ss of rs.scopeSpans) for (const s of ss.spans) s.status ??= { message: "", code: 0 };
  return r;
}

describe("OTLP protobuf encoding of spans", () => {
  it("decodes to the same request as the OpenTelemetry SDK's serializer", () => {
    const ours = new ProtobufWriter(64); // grows several times on the way
    const list = spans();
    for (const s of list) writeSpan(ours, s);
    const request = encodeRequest(encodeSource(source), ours.bytes());
    const sdk = ProtobufTraceSerializer.serializeRequest(spans())!;
    const decoded = normalize(decodeTraceRequest(request));
    expect(decoded).toEqual(normalize(decodeTraceRequest(sdk)));
    // And what it says, spelled out for a few fields.
    const s = (decoded as { resourceSpans: { scopeSpans: { spans: Record<string, unknown>[] }[] }[] }).resourceSpans[0]!.scopeSpans[0]!
      .spans;
    expect(s.map((x) => x.name)).toEqual(["invoke_agent triage", "chat gpt-4o-mini", "execute_tool refund — ✓", "execute_tool wipe"]);
    expect(s[0]!.startTimeUnixNano).toBe("1764600000123250000");
    expect(s[0]!.endTimeUnixNano).toBe("1764600002000000000");
    expect(s[2]!.status).toEqual({ message: "the card was declined", code: SpanStatusCode.ERROR });
  });

  it("leaves out attributes that never got a value", () => {
    const span = new RecordedSpan(
      source,
      "chat m",
      SpanKind.CLIENT,
      TRACE,
      "00f067aa0ba902b7",
      undefined,
      1,
      {
        "gen_ai.request.model": "m",
        "gen_ai.usage.input_tokens": undefined,
      },
      true,
    );
    const w = new ProtobufWriter();
    writeSpan(w, span);
    const decoded = decodeTraceRequest(encodeRequest(encodeSource(source), w.bytes())) as {
      resourceSpans: { scopeSpans: { spans: { attributes: { key: string }[] }[] }[] }[];
    };
    expect(decoded.resourceSpans[0]!.scopeSpans[0]!.spans[0]!.attributes.map((a) => a.key)).toEqual(["gen_ai.request.model"]);
  });

  it("writes epoch milliseconds as exact nanoseconds", () => {
    const w = new ProtobufWriter(8);
    const cases = [0, 1, 999.9999995, 1764600000123.25, 1764600001999.999999, 4102444800000.5, Date.now() + 0.123456];
    for (const ms of cases) {
      w.reset();
      w.unixNanos(ms);
      const seconds = Math.floor(ms / 1000);
      let nanos = Math.round((ms - seconds * 1000) * 1e6);
      let s = BigInt(seconds);
      if (nanos >= 1e9) {
        s += 1n;
        nanos -= 1e9;
      }
      expect(w.bytes().readBigUInt64LE(0), `ms ${ms}`).toBe(s * 1_000_000_000n + BigInt(nanos));
    }
  });
});
