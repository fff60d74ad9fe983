/**
 * Where traces go and how they are sampled, from config.yaml's `telemetry:`
 * block and the standard OpenTelemetry variables. A key set in config.yaml
 * wins over its variable (the file is the project's explicit choice, as with
 * OpenTelemetry's own configuration file); variables fill in the rest.
 * Tracing is off unless an endpoint is named (or OTEL_TRACES_EXPORTER=otlp
 * asks for the default one), and OTEL_SDK_DISABLED=true turns it off. A
 * variable with a value that cannot be used is reported and ignored, as the
 * OpenTelemetry specification asks of SDKs.
 */
import { OTEL_SAMPLERS, type TelemetrySettings } from "../config/integration-schemas.js";

export type TraceProtocol = "http/protobuf" | "http/json";
export type SamplerName = (typeof OTEL_SAMPLERS)[number];

export interface TracingSettings {
  /** The full URL spans are POSTed to (…/v1/traces). */
  url: string;
  protocol: TraceProtocol;
  headers: Record<string, string>;
  serviceName: string;
  /** From OTEL_RESOURCE_ATTRIBUTES. */
  resource: Record<string, string>;
  sampler: SamplerName;
  /** The ratio of the ratio samplers, 0..1. */
  samplerArg: number;
  /** Prompts, replies, tool arguments and results in spans. */
  captureContent: boolean;
  batch: { maxQueueSize: number; maxExportBatchSize: number; scheduledDelayMillis: number; exportTimeoutMillis: number };
}

export interface ResolvedTracing {
  /** Undefined when traces are off. */
  settings: TracingSettings | undefined;
  /** Variables that were set but could not be used. */
  warnings: string[];
}

/** Where the OTLP/HTTP default collector listens. */
const DEFAULT_BASE = "http://localhost:4318";

export function resolveTracing(config: TelemetrySettings | undefined, env: NodeJS.ProcessEnv): ResolvedTracing {
  const warnings: string[] = [];
  const off = { settings: undefined, warnings };
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return off;
  const exporters = list(env.OTEL_TRACES_EXPORTER);
  if (exporters.includes("none")) return off;
  for (const e of exporters) {
    if (e !== "otlp") warnings.push(`OTEL_TRACES_EXPORTER=${e}: Wardrik exports traces over OTLP/HTTP only; "${e}" is ignored.`);
  }

  const url = config?.endpoint
    ? tracesUrl(config.endpoint)
    : (usableUrl("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", env, warnings) ??
      mapOptional(usableUrl("OTEL_EXPORTER_OTLP_ENDPOINT", env, warnings), tracesUrl) ??
      (exporters.includes("otlp") ? tracesUrl(DEFAULT_BASE) : undefined));
  if (url === undefined) return off;

  const resource = keyValues("OTEL_RESOURCE_ATTRIBUTES", env, warnings);
  return {
    warnings,
    settings: {
      url,
      protocol: config?.protocol ?? protocolFromEnv(env, warnings),
      headers: {
        ...keyValues("OTEL_EXPORTER_OTLP_HEADERS", env, warnings),
        ...keyValues("OTEL_EXPORTER_OTLP_TRACES_HEADERS", env, warnings),
        ...config?.headers,
      },
      serviceName: config?.service_name ?? (env.OTEL_SERVICE_NAME?.trim() || resource["service.name"] || "wardrik"),
      resource,
      sampler: config?.sampler ?? samplerFromEnv(env, warnings),
      samplerArg: config?.sampler_arg ?? ratioFromEnv(env, warnings),
      captureContent:
        config?.capture_message_content ?? env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === "true",
      batch: {
        maxQueueSize: count("OTEL_BSP_MAX_QUEUE_SIZE", env, warnings) ?? 8192,
        maxExportBatchSize: count("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", env, warnings) ?? 512,
        scheduledDelayMillis: count("OTEL_BSP_SCHEDULE_DELAY", env, warnings) ?? 5000,
        exportTimeoutMillis: count("OTEL_BSP_EXPORT_TIMEOUT", env, warnings) ?? 30_000,
      },
    },
  };
}

/** A base endpoint (OTEL_EXPORTER_OTLP_ENDPOINT, config `endpoint`) plus the traces path. */
function tracesUrl(base: string): string {
  return `${base.replace(/\/+$/, "")}/v1/traces`;
}

function mapOptional<T, U>(value: T | undefined, fn: (v: T) => U): U | undefined {
  return value === undefined ? undefined : fn(value);
}

function usableUrl(name: string, env: NodeJS.ProcessEnv, warnings: string[]): string | undefined {
  const value = env[name]?.trim();
  if (!value) return undefined;
  try {
    const u = new URL(value);
    if (u.protocol === "http:" || u.protocol === "https:") return value;
  } catch {
    // reported below
  }
  warnings.push(`${name}=${value} is not an http:// or https:// URL; it is ignored.`);
  return undefined;
}

function protocolFromEnv(env: NodeJS.ProcessEnv, warnings: string[]): TraceProtocol {
  for (const name of ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"]) {
    const value = env[name]?.trim();
    if (!value) continue;
    if (value === "http/protobuf" || value === "http/json") return value;
    warnings.push(`${name}=${value}: Wardrik sends traces as http/protobuf or http/json; using http/protobuf.`);
    return "http/protobuf";
  }
  return "http/protobuf";
}

function samplerFromEnv(env: NodeJS.ProcessEnv, warnings: string[]): SamplerName {
  const value = env.OTEL_TRACES_SAMPLER?.trim();
  if (!value) return "parentbased_always_on";
  if ((OTEL_SAMPLERS as readonly string[]).includes(value)) return value as SamplerName;
  warnings.push(`OTEL_TRACES_SAMPLER=${value} is not one of ${OTEL_SAMPLERS.join(", ")}; using parentbased_always_on.`);
  return "parentbased_always_on";
}

function ratioFromEnv(env: NodeJS.ProcessEnv, warnings: string[]): number {
  const value = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  if (!value) return 1;
  const n = Number(value);
  if (Number.isFinite(n) && n >= 0 && n <= 1) return n;
  warnings.push(`OTEL_TRACES_SAMPLER_ARG=${value} is not a ratio between 0 and 1; using 1.`);
  return 1;
}

function count(name: string, env: NodeJS.ProcessEnv, warnings: string[]): number | undefined {
  const value = env[name]?.trim();
  if (!value) return undefined;
  const n = Number(value);
  if (Number.isInteger(n) && n > 0) return n;
  warnings.push(`${name}=${value} is not a positive whole number; it is ignored.`);
  return undefined;
}

function list(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== "");
}

/** `key=value,key2=value2` with percent-encoded values (OTEL_EXPORTER_OTLP_HEADERS, OTEL_RESOURCE_ATTRIBUTES). */
function keyValues(name: string, env: NodeJS.ProcessEnv, warnings: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (env[name] ?? "").split(",")) {
    if (pair.trim() === "") continue;
    const eq = pair.indexOf("=");
    const key = eq > 0 ? pair.slice(0, eq).trim() : "";
    if (key === "") {
      // The pair may hold a credential: name the variable, not the value.
      warnings.push(`${name} has an entry that is not key=value; it is ignored.`);
      continue;
    }
    try {
      out[key] = decodeURIComponent(pair.slice(eq + 1).trim());
    } catch {
      warnings.push(`${name}: the value of ${key} is not valid percent-encoding; it is ignored.`);
    }
  }
  return out;
}
