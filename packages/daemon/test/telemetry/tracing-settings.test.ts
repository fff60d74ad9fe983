/**
 * Where traces go, from the standard OTEL_* variables or config.yaml's
 * `telemetry:` block, and when tracing is off: with neither set, the daemon
 * gets the engine's no-op telemetry and the OpenTelemetry SDK is not loaded.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EventBus } from "../../src/events/event-bus.js";
import { systemClock, ulidIds } from "../../src/ids.js";
import { noTelemetry } from "../../src/runtime/telemetry.js";
import { startTracing } from "../../src/telemetry/start-tracing.js";
import { resolveTracing } from "../../src/telemetry/tracing-settings.js";
import { SqliteDb } from "../../src/store/sqlite-db.js";
import { Store } from "../../src/store/store.js";

describe("resolveTracing", () => {
  it("is off when neither config.yaml nor a variable names an endpoint, or when the SDK is disabled", () => {
    expect(resolveTracing(undefined, {}).settings).toBeUndefined();
    expect(resolveTracing({ capture_message_content: true }, { OTEL_SERVICE_NAME: "x" }).settings).toBeUndefined();
    expect(resolveTracing(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" }).settings).toBeUndefined();
    expect(
      resolveTracing(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_TRACES_EXPORTER: "none" }).settings,
    ).toBeUndefined();
  });

  it("reads the standard variables", () => {
    const { settings, warnings } = resolveTracing(undefined, {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "support-agents",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.25",
      OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=k%3D1,x-team=ops",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod",
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true",
    });
    expect(warnings).toEqual([]);
    expect(settings).toMatchObject({
      url: "http://collector:4318/v1/traces",
      protocol: "http/json",
      serviceName: "support-agents",
      sampler: "parentbased_traceidratio",
      samplerArg: 0.25,
      headers: { "x-api-key": "k=1", "x-team": "ops" },
      resource: { "deployment.environment": "prod" },
      captureContent: true,
    });
    // The traces-specific endpoint is used as is, without a path added.
    expect(resolveTracing(undefined, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:9999/traces" }).settings?.url).toBe(
      "http://c:9999/traces",
    );
    // Defaults: protobuf, parent-based always-on, no content.
    expect(resolveTracing(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" }).settings).toMatchObject({
      protocol: "http/protobuf",
      sampler: "parentbased_always_on",
      serviceName: "wardrik",
      captureContent: false,
    });
  });

  it("takes config.yaml's telemetry block over the variables", () => {
    const { settings } = resolveTracing(
      {
        endpoint: "https://otlp.example.com",
        protocol: "http/json",
        service_name: "from-config",
        sampler: "always_off",
        headers: { authorization: "Bearer abc" },
        capture_message_content: false,
      },
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://ignored:4318",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
        OTEL_SERVICE_NAME: "from-env",
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true",
      },
    );
    expect(settings).toMatchObject({
      url: "https://otlp.example.com/v1/traces",
      protocol: "http/json",
      serviceName: "from-config",
      sampler: "always_off",
      headers: { authorization: "Bearer abc" },
      captureContent: false,
    });
  });

  it("names a variable it cannot use, without showing a header's value, and goes on", () => {
    const { settings, warnings } = resolveTracing(undefined, {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      OTEL_TRACES_SAMPLER: "sometimes",
      OTEL_TRACES_SAMPLER_ARG: "2",
      OTEL_EXPORTER_OTLP_HEADERS: "sk-secret-value",
    });
    expect(settings).toMatchObject({ protocol: "http/protobuf", sampler: "parentbased_always_on", samplerArg: 1, headers: {} });
    expect(warnings.join("\n")).toMatch(/OTEL_EXPORTER_OTLP_PROTOCOL=grpc/);
    expect(warnings.join("\n")).toMatch(/OTEL_TRACES_SAMPLER=sometimes/);
    expect(warnings.join("\n")).toMatch(/OTEL_TRACES_SAMPLER_ARG=2/);
    expect(warnings.join("\n")).toMatch(/OTEL_EXPORTER_OTLP_HEADERS has an entry that is not key=value/);
    expect(warnings.join("\n")).not.toContain("sk-secret-value");
    expect(resolveTracing(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }).warnings).toEqual([
      "OTEL_EXPORTER_OTLP_ENDPOINT=collector:4318 is not an http:// or https:// URL; it is ignored.",
    ]);
  });
});

describe("startTracing when off", () => {
  it("hands the engine the no-op telemetry and logs nothing about exporting", async () => {
    const dir = mkdtempSync(join(tmpdir(), "wardrik-tracing-off-"));
    const db = new SqliteDb(join(dir, "state.db"));
    const bus = new EventBus();
    const lines: string[] = [];
    const tracing = await startTracing(
      undefined,
      {},
      {
        store: new Store(db, bus, ulidIds(systemClock), systemClock),
        bus,
        log: (_level, msg) => lines.push(msg),
        redact: (t) => t,
        version: "test",
      },
    );
    expect(tracing.telemetry).toBe(noTelemetry);
    expect(tracing.settings).toBeUndefined();
    expect(tracing.logFields({ run: "run_1" })).toBeUndefined();
    expect(lines).toEqual([]);
    await tracing.shutdown();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
