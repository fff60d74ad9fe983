/** Small OpenTelemetry SDK pieces the tracing layer builds on (loaded only with it). */
import { diag, DiagLogLevel } from "@opentelemetry/api";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  RandomIdGenerator,
  TraceIdRatioBasedSampler,
  type IdGenerator,
  type Sampler,
} from "@opentelemetry/sdk-trace-base";
import type { Logger } from "../log/logger.js";
import type { ToolOutcome } from "../tools/toolset.js";
import type { SamplerName } from "./tracing-settings.js";

export function buildSampler(name: SamplerName, ratio: number): Sampler {
  switch (name) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return new TraceIdRatioBasedSampler(ratio);
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
    case "parentbased_always_on":
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

// OpenTelemetry's own generator (Math.random into a shared buffer): IDs name spans, they guard nothing,
// and crypto's randomBytes per span was a tenth of what tracing cost a turn (bench/telemetry.ts).
const random = new RandomIdGenerator();

export function randomTraceId(): string {
  return random.generateTraceId();
}

export function randomSpanId(): string {
  return random.generateSpanId();
}

/**
 * Random IDs, except inside `fixed()`: the root span of a turn is exported
 * when the turn ends, with the trace and span IDs chosen (and stored) when it
 * started, so the spans its stretches recorded meanwhile are its children.
 */
export class FixableIds implements IdGenerator {
  private ids: { traceId: string; spanId: string } | undefined;

  generateTraceId(): string {
    return this.ids?.traceId ?? random.generateTraceId();
  }

  generateSpanId(): string {
    return this.ids?.spanId ?? random.generateSpanId();
  }

  /** Runs `start` (synchronous: nothing else can start a span meanwhile) with these IDs for the span it starts. */
  fixed<T>(ids: { traceId: string; spanId: string }, start: () => T): T {
    this.ids = ids;
    try {
      return start();
    } finally {
      this.ids = undefined;
    }
  }
}

/** How often the SDK's own complaints (a collector that does not answer) reach the log at most. */
const DIAG_INTERVAL_MS = 60_000;

/**
 * The SDK reports export failures through its diagnostics channel, silent by
 * default: they go to the daemon's log as warnings, at most one a minute so a
 * collector that is down does not flood it.
 */
export function routeDiagnostics(log: Logger): void {
  let last = 0;
  const warn = (message: string, ...args: unknown[]) => {
    const now = Date.now();
    if (now - last < DIAG_INTERVAL_MS) return;
    last = now;
    log("warn", `OpenTelemetry: ${message}`, args.length > 0 ? { detail: args.map(String).join(" ") } : undefined);
  };
  const quiet = () => undefined;
  diag.setLogger(
    { error: warn, warn, info: quiet, debug: quiet, verbose: quiet },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
}

/** The GenAI conventions' provider name for an AI SDK provider string (`openai.chat`, `anthropic.messages`). */
export function providerName(aiSdkProvider: string): string {
  const prefix = aiSdkProvider.split(".")[0] ?? aiSdkProvider;
  if (prefix === "script") return "wardrik.script";
  // An openai-compatible server is named after its config.yaml entry: a custom value, as the conventions allow.
  return prefix;
}

/** A tool outcome as a failure code, or `completed`. */
export function outcomeCode(o: ToolOutcome): string {
  if (o.ok) return "completed";
  switch (o.kind) {
    case "timeout":
    case "killed":
    case "lost":
      return o.kind;
    case "unavailable":
      return "no_worker";
    default:
      return "tool_error";
  }
}
