/**
 * `npm run bench -- otlp-spans [SPANS] [ROUNDS]`: exporting spans over OTLP
 * http/protobuf, the hand-written queue and encoder
 * (src/telemetry/span-export-queue.ts, otlp-span-encoding.ts,
 * protobuf-writer.ts) against the SDK's BatchSpanProcessor with its protobuf
 * serializer (ProtobufTraceSerializer, what @opentelemetry/exporter-trace-otlp-proto
 * is), both over the same SDK HTTP transport to a receiver on 127.0.0.1 in a
 * process of its own. The measured path: a span as a turn ends one (an
 * execute_tool span with the daemon's attributes) handed to the sink, and its
 * batch encoded and sent; spans are ended 512 at a time (one default batch)
 * and flushed, so neither side drops any. One op is one span (SPANS a round,
 * default 20480); the figure is this process's CPU time per span, the
 * garbage collector's included. Prints one JSON line.
 */
import { spawn } from "node:child_process";
import { SpanKind } from "@opentelemetry/api";
import { OTLPExporterBase } from "@opentelemetry/otlp-exporter-base";
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from "@opentelemetry/otlp-exporter-base/node-http";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { RecordedSpan, type SpanSource } from "../packages/daemon/dist/telemetry/recorded-span.js";
import { SpanExportQueue } from "../packages/daemon/dist/telemetry/span-export-queue.js";
import { compare, printComparisons } from "./side-by-side.js";

const SPANS = Number(process.argv[2] ?? 20_480);
const ROUNDS = Number(process.argv[3] ?? 6);
const CHUNK = 512;
const batch = { maxQueueSize: 2048, maxExportBatchSize: 512, scheduledDelayMillis: 5000, exportTimeoutMillis: 30_000 };

const receiver = spawn(
  process.execPath,
  [
    "-e",
    `const server = require("node:http").createServer((req, res) => { req.resume(); req.on("end", () => res.writeHead(200, { "content-type": "application/x-protobuf" }).end()); });
     server.keepAliveTimeout = 60000;
     server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"));`,
  ],
  { stdio: ["ignore", "pipe", "inherit"] },
);
const port = await new Promise<number>((resolve) => receiver.stdout!.once("data", (d: Buffer) => resolve(Number(String(d).trim()))));
const url = `http://127.0.0.1:${port}/v1/traces`;

const source: SpanSource = {
  resource: defaultResource().merge(resourceFromAttributes({ "service.name": "wardrik", "service.version": "0.1.0" })),
  scope: { name: "wardrik", version: "0.1.0" },
};
const parent = { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags: 1 };

let n = 0;
function span(): RecordedSpan {
  n++;
  const start = Date.now() - 3;
  const s = new RecordedSpan(
    source,
    "execute_tool workers/lookup_order",
    SpanKind.INTERNAL,
    parent.traceId,
    (0x1000000000000000n + BigInt(n)).toString(16),
    parent,
    start,
    {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "workers/lookup_order",
      "gen_ai.tool.call.id": `call_01JB${String(n).padStart(22, "0")}`,
      "gen_ai.agent.name": "support",
      "gen_ai.agent.id": "agent_01JB0000000000000000000000",
      "gen_ai.conversation.id": "conv_01JB0000000000000000000000",
      "wardrik.org": "default",
      "wardrik.run": "run_01JB0000000000000000000000",
      "wardrik.call.attempt": 1,
      "wardrik.policy.decision": "allow",
    },
    true,
  );
  s.endMs = start + 2.5;
  return s;
}

const hand = new SpanExportQueue(source, { url, headers: {}, batch }, (level, msg, fields) =>
  console.error(level, msg, JSON.stringify(fields)),
);
const sdk = new BatchSpanProcessor(
  new OTLPExporterBase(
    createOtlpHttpExportDelegate(
      convertLegacyHttpOptions({ url, headers: {} }, "TRACES", "v1/traces", { "Content-Type": "application/x-protobuf" }),
      ProtobufTraceSerializer,
      "otlp_http_span_exporter",
      { name: "span", countItems: (spans: ReadableSpan[]) => spans.length },
      undefined,
    ),
  ),
  batch,
);

const endSpans = (sink: { onEnd(s: RecordedSpan): void; forceFlush(): Promise<void> }) => async (ops: number) => {
  for (let done = 0; done < ops; done += CHUNK) {
    for (let i = 0; i < Math.min(CHUNK, ops - done); i++) sink.onEnd(span());
    await sink.forceFlush();
  }
};

try {
  const result = await compare(
    "end an execute_tool span, batch (512), encode protobuf, POST to a local receiver",
    SPANS,
    ROUNDS,
    endSpans({ onEnd: (s) => hand.onEnd(s), forceFlush: () => hand.flush() }),
    {
      name: "@opentelemetry/sdk-trace-base BatchSpanProcessor + otlp-transformer ProtobufTraceSerializer 0.223",
      side: endSpans({ onEnd: (s) => sdk.onEnd(s), forceFlush: () => sdk.forceFlush() }),
    },
  );
  printComparisons("otlp-spans", [result]);
} finally {
  await hand.shutdown();
  await sdk.shutdown();
  receiver.kill();
}
