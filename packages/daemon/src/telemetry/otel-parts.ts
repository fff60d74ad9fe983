/** Small OpenTelemetry SDK pieces the tracing layer builds on (loaded only with it). */
import { diag, DiagLogLevel, type Attributes } from "@opentelemetry/api";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  RandomIdGenerator,
  TraceIdRatioBasedSampler,
  type Sampler,
} from "@opentelemetry/sdk-trace-base";
import type { Logger } from "../log/logger.js";
import { ModelCallError } from "../runtime/call-model.js";
import { TurnStop } from "../runtime/engine-options.js";
import type { ModelCallTelemetry, ToolCallTelemetry } from "../runtime/telemetry.js";
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

/** A new trace ID (one a turn): random, as W3C trace context asks of trace IDs. */
export function randomTraceId(): string {
  return random.generateTraceId();
}

/** The root span's ID, chosen with the trace ID. */
export function randomSpanId(): string {
  return random.generateSpanId();
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

/** A `chat` span's attributes, with the keys its reply fills in (see toolAttributes). */
export function modelAttributes(call: ModelCallTelemetry, provider: string): Attributes {
  return {
    "gen_ai.agent.id": call.agentId,
    "gen_ai.agent.name": call.agentName,
    "gen_ai.conversation.id": call.conversationId,
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": provider,
    "gen_ai.request.model": call.modelId,
    "wardrik.model": call.ref,
    "wardrik.turn.iteration": call.iteration,
    "gen_ai.usage.input_tokens": undefined,
    "gen_ai.usage.output_tokens": undefined,
    "gen_ai.usage.cache_read.input_tokens": undefined,
    "gen_ai.response.finish_reasons": undefined,
    "wardrik.cost_usd": undefined,
    "wardrik.tool_calls": undefined,
    "error.type": undefined,
  };
}

/** An `execute_tool` span's attributes (the turn's too: backends filter child spans by agent and conversation). */
export function toolAttributes(c: ToolCallTelemetry): Attributes {
  // Every key the span may get is here from the start (undefined until set, and then left out of the export):
  // one object shape for every tool span, instead of a shape change for each key added at the end.
  return {
    "gen_ai.agent.id": c.agentId,
    "gen_ai.agent.name": c.agentName,
    "gen_ai.conversation.id": c.conversationId,
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": c.tool,
    "gen_ai.tool.call.id": c.callId,
    "gen_ai.tool.type": "function",
    "gen_ai.tool.description": c.description || undefined,
    "wardrik.call.decision": c.decision ?? "none",
    "wardrik.call.attempt": c.attempt > 0 ? c.attempt : undefined,
    "wardrik.call.outcome": undefined,
    "error.type": undefined,
  };
}

/** The `error.type` of work that threw. */
export function errorType(err: unknown): string {
  if (err instanceof TurnStop) return err.why;
  if (err instanceof ModelCallError) return "model_error";
  return err instanceof Error ? err.name : "_OTHER";
}
