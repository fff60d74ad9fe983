/**
 * Traces after the OpenTelemetry GenAI semantic conventions. Loaded (with the
 * OpenTelemetry SDK) only when tracing is configured: see start-tracing.ts.
 *
 * The shape of a turn's trace:
 *
 *   invoke_agent {agent}          the whole turn, start to end (waits included)
 *   ├─ chat {model}               each model call
 *   ├─ execute_tool {tool}        each attempt of a call; denied, invalid and
 *   │                             waiting calls get one when decided
 *   └─ ...                        later stretches (after a park, a crash, on
 *                                 another node) join the same trace
 *
 * The turn's trace and root span IDs are chosen when the turn starts and
 * stored with it (turns.trace_context), so every stretch of the turn, in any
 * process, parents its spans to the same root. The root span itself is
 * exported when the turn ends, by whichever process ends it, with the stored
 * IDs and the turn's recorded start time.
 *
 * Spans are recorded as the SDK's ReadableSpan directly (recorded-span.ts);
 * the SDK's sampler decides; the SDK's BatchSpanProcessor and OTLP exporter
 * (http/protobuf or http/json) send them (span-sinks.ts).
 */
import { ROOT_CONTEXT, SpanKind, type Attributes, type SpanContext } from "@opentelemetry/api";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
import { SamplingDecision, type Sampler } from "@opentelemetry/sdk-trace-base";
import { EVENT_TYPE_PREFIX, formatTraceParent, parseTraceParent, type EventDataMap, type TraceParent } from "@wardrik/protocol";
import type { ModelReply } from "../runtime/call-model.js";
import type { ModelCallTelemetry, Started, Telemetry, ToolCallTelemetry, TurnTelemetry } from "../runtime/telemetry.js";
import type { NewCall } from "../store/calls.js";
import type { Writer } from "../store/store.js";
import type { ToolOutcome } from "../tools/toolset.js";
import { inputMessages, outputMessages, systemInstructions, toolContent } from "./gen-ai-content.js";
import {
  buildSampler,
  errorType,
  modelAttributes,
  outcomeCode,
  providerName,
  randomSpanId,
  randomTraceId,
  routeDiagnostics,
  toolAttributes,
} from "./otel-parts.js";
import { CallSpan, RecordedSpan, type SpanSource } from "./recorded-span.js";
import { spanSink, type SpanSink } from "./span-sinks.js";
import { SpanIds } from "./span-ids.js";
import type { TracingDeps, DaemonTracing } from "./start-tracing.js";
import type { TracingSettings } from "./tracing-settings.js";
import { TurnTraces } from "../store/turn-traces.js";
import type { StoredEvent } from "../events/event-bus.js";

/** A turn's trace as this process knows it. */
interface TurnTrace {
  traceparent: TraceParent;
  /** The turn's root span: the parent of every span of the turn. */
  parent: SpanContext;
  /** The sampler's decision for the turn, made once when it started: every span of the turn follows it. */
  sampled: boolean;
  startedAt: number;
  turn: TurnTelemetry | undefined;
  /** The provider of the turn's latest model call, for the root span. */
  provider?: string;
  /** A child turn's: the execute_tool span of the agents/NAME call it runs for, its root span's parent. */
  caller?: SpanContext | undefined;
}

/**
 * Turns that ended are kept (by count, in two generations) for spans recorded just after the end. Generations:
 * finding a Map's oldest entry behind the holes of deleted ones cost a turn microseconds (bench/telemetry.ts).
 */
const RECENTLY_ENDED = 64;
const MAX_OPEN = 100_000;

const TURN_ENDS = new Set(["turn.completed", "turn.failed", "turn.cancelled"].map((t) => EVENT_TYPE_PREFIX + t));

/** A child turn's caller span (its root span's parent) from the stored trace context of its agents/NAME call. */
function callerSpan(traceparent: string | null | undefined): SpanContext | undefined {
  const caller = parseTraceParent(traceparent ?? undefined);
  return caller ? { traceId: caller.traceId, spanId: caller.spanId, traceFlags: caller.flags, isRemote: true } : undefined;
}

export function createOtelTracing(settings: TracingSettings, deps: TracingDeps): DaemonTracing {
  routeDiagnostics(deps.log);
  // No global context manager: Node 20's AsyncLocalStorage hooks every promise of the process, which cost
  // W1 about a tenth of its time (bench/telemetry.ts). Spans get their parent explicitly, and log lines find
  // their trace by the turn they name (`run`).
  const sampler = buildSampler(settings.sampler, settings.samplerArg);
  const source: SpanSource = {
    resource: defaultResource().merge(
      resourceFromAttributes({
        ...(deps.node !== undefined ? { "wardrik.node": deps.node } : {}),
        ...settings.resource,
        "service.name": settings.serviceName,
        "service.version": deps.version,
      }),
    ),
    scope: { name: "wardrik", version: deps.version },
  };
  const processor: SpanSink = spanSink(settings);
  const tracing = new OtelTracing(source, sampler, processor, settings, deps);
  return {
    telemetry: tracing,
    settings,
    logFields: (fields) => (typeof fields?.run === "string" ? tracing.logFields(fields.run) : undefined),
    shutdown: async () => {
      await tracing.close();
      // Spans that cannot be sent now (a collector that is down, more batches than the exporter sends at once)
      // are lost, not a reason for the daemon's stop to fail.
      await processor
        .shutdown()
        .catch((err: unknown) => deps.log("warn", "OpenTelemetry: spans could not be exported at shutdown", { err: String(err) }));
    },
  };
}

class OtelTracing implements Telemetry {
  private readonly open = new Map<string, TurnTrace>();
  private ended = new Map<string, TurnTrace>();
  private endedBefore = new Map<string, TurnTrace>();
  private readonly pending = new Set<Promise<void>>();
  private readonly ids = new SpanIds();
  private readonly traces: TurnTraces;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly source: SpanSource,
    private readonly sampler: Sampler,
    private readonly processor: SpanSink,
    private readonly settings: TracingSettings,
    private readonly deps: TracingDeps,
  ) {
    this.traces = new TurnTraces(deps.store.db);
    this.unsubscribe = deps.bus.subscribe("*", (e) => {
      if (TURN_ENDS.has(e.type)) this.turnEnded(e);
    });
  }

  turnStarting(w: Writer, turn: TurnTelemetry): string {
    // A child turn joins its call's trace under the call's span (kept with the message: any node, after a crash too).
    const caller = parseTraceParent(turn.callerTrace);
    const traceId = caller?.traceId ?? randomTraceId();
    const flags = (caller ? (caller.flags & 1) === 1 : this.sampled(traceId, `invoke_agent ${turn.agentName}`)) ? 1 : 0;
    const traceparent = { traceId, spanId: randomSpanId(), flags };
    const startedAt = Date.parse(w.now);
    w.afterCommit(() => {
      const t = this.remember(turn.run, traceparent, startedAt, turn);
      t.caller = callerSpan(turn.callerTrace);
    });
    return formatTraceParent(traceparent);
  }

  inTurn<T>(turn: TurnTelemetry, fn: () => Promise<T>): Promise<T> {
    const known = this.open.get(turn.run);
    if (!known) return this.load(turn).then(fn);
    known.turn = turn;
    return fn();
  }

  /** A log line about turn `run`: its trace and root span, while this process knows the turn. */
  logFields(run: string): Record<string, string> | undefined {
    const t = this.turnTrace(run);
    return t ? { trace_id: t.traceparent.traceId, span_id: t.traceparent.spanId } : undefined;
  }

  modelCallStarted(call: ModelCallTelemetry): CallSpan<ModelCallTelemetry> {
    const t = this.turnTrace(call.run);
    const provider = providerName(call.provider);
    if (t) t.provider = provider;
    const span = this.begin(t, call, `chat ${call.modelId}`, SpanKind.CLIENT, modelAttributes(call, provider));
    if (this.settings.captureContent && span.sampled) {
      const { instructions, prompt } = call.content();
      span.attributes["gen_ai.system_instructions"] = this.deps.redact(systemInstructions(instructions));
      span.attributes["gen_ai.input.messages"] = this.deps.redact(inputMessages(prompt));
    }
    return span;
  }

  modelCallEnded(started: Started | undefined, reply: ModelReply | undefined, error?: unknown): void {
    const span = started as CallSpan<ModelCallTelemetry>;
    const call = span.call!;
    if (reply) {
      const a = span.attributes;
      a["gen_ai.usage.input_tokens"] = reply.usage.input;
      a["gen_ai.usage.output_tokens"] = reply.usage.output;
      a["gen_ai.usage.cache_read.input_tokens"] = reply.usage.cached;
      a["gen_ai.response.finish_reasons"] = [reply.finishReason];
      a["wardrik.cost_usd"] = reply.costUsd;
      a["wardrik.tool_calls"] = reply.toolCalls.length;
      if (this.settings.captureContent && span.sampled) a["gen_ai.output.messages"] = this.deps.redact(outputMessages(reply));
      this.deps.log("debug", "model call ended", {
        trace_id: span.traceId,
        span_id: span.spanId,
        agent: call.agentId,
        run: call.run,
        model: call.ref,
        ms: Math.round(performance.now() - span.perfStart),
        input_tokens: reply.usage.input,
        output_tokens: reply.usage.output,
      });
    } else span.failed(errorType(error));
    this.end(span);
  }

  toolCallStarted(call: ToolCallTelemetry): CallSpan<ToolCallTelemetry> {
    const span = this.begin(this.turnTrace(call.run), call, `execute_tool ${call.tool}`, SpanKind.INTERNAL, toolAttributes(call));
    if (this.settings.captureContent && span.sampled) {
      span.attributes["gen_ai.tool.call.arguments"] = this.deps.redact(toolContent(call.args ?? {}));
    }
    return span;
  }

  toolCallEnded(started: Started | undefined, outcome: ToolOutcome | undefined, error?: unknown): void {
    const span = started as CallSpan<ToolCallTelemetry>;
    const call = span.call!;
    if (outcome) {
      const code = outcomeCode(outcome);
      const capture = this.settings.captureContent && span.sampled;
      span.attributes["wardrik.call.outcome"] = code;
      if (outcome.ok) {
        if (capture) span.attributes["gen_ai.tool.call.result"] = this.deps.redact(toolContent(outcome.output ?? null));
      } else span.failed(code, capture ? this.deps.redact(outcome.error) : undefined);
      this.deps.log("debug", "tool call ended", {
        trace_id: span.traceId,
        span_id: span.spanId,
        agent: call.agentId,
        run: call.run,
        call: call.callId,
        tool: call.tool,
        outcome: code,
        ms: Math.round(performance.now() - span.perfStart),
      });
    } else span.failed(errorType(error));
    this.end(span);
  }

  callsPlanned(turn: TurnTelemetry, calls: readonly NewCall[]): void {
    const t = this.turnTrace(turn.run);
    if (!t) return;
    for (const c of calls) {
      if (c.status === "running") continue; // its span comes when it runs
      const outcome = c.status === "waiting" ? "approval_requested" : (c.errorCode ?? c.status);
      const traced = { ...turn, callId: c.id, tool: c.tool, description: "", decision: c.decision, attempt: 0, args: c.args };
      const span = this.begin(t, traced, `execute_tool ${c.tool}`, SpanKind.INTERNAL, toolAttributes(traced));
      span.attributes["wardrik.call.outcome"] = outcome;
      if (c.status !== "waiting") span.failed(outcome);
      this.end(span);
    }
  }

  async close(): Promise<void> {
    this.unsubscribe();
    await Promise.allSettled([...this.pending]);
  }

  // ---- spans ----

  /**
   * Whether the sampler records a new trace. Asked once a turn: a turn's spans follow its decision, as the
   * parent-based samplers (the default) decide, and as the others do too, since they decide by trace ID alone.
   */
  private sampled(traceId: string, name: string, kind: SpanKind = SpanKind.INTERNAL): boolean {
    return this.sampler.shouldSample(ROOT_CONTEXT, traceId, name, kind, {}, []).decision === SamplingDecision.RECORD_AND_SAMPLED;
  }

  /** A call's span in turn `t` (a trace of its own when this process does not know the turn), starting now. */
  private begin<C>(t: TurnTrace | undefined, call: C, name: string, kind: SpanKind, attributes: Attributes): CallSpan<C> {
    const traceId = t ? t.traceparent.traceId : randomTraceId();
    const sampled = t ? t.sampled : this.sampled(traceId, name, kind);
    const span = new CallSpan<C>(this.source, name, kind, traceId, this.ids.next(), t?.parent, Date.now(), attributes, sampled);
    span.call = call;
    return span;
  }

  /** Ends a call's span; a sampled one goes to the SDK's batch. */
  private end(span: CallSpan<unknown>): void {
    span.call = undefined; // it holds the prompt: not to be kept while the span waits for its batch
    if (!span.sampled) return;
    span.endMs = span.startMs + (performance.now() - span.perfStart);
    this.processor.onEnd(span);
  }

  // ---- turns ----

  private remember(run: string, traceparent: TraceParent, startedAt: number, turn: TurnTelemetry | undefined): TurnTrace {
    if (this.open.size >= MAX_OPEN) this.open.delete(this.open.keys().next().value!);
    // Remote: the root span is exported by whichever process ends the turn, not as this process's local parent.
    const parent: SpanContext = { traceId: traceparent.traceId, spanId: traceparent.spanId, traceFlags: traceparent.flags, isRemote: true };
    const t: TurnTrace = { traceparent, parent, sampled: (traceparent.flags & 1) === 1, startedAt, turn };
    this.open.set(run, t);
    return t;
  }

  /** A turn this process did not start: its stored trace, or a new one for a turn that started untraced. */
  private async load(turn: TurnTelemetry): Promise<void> {
    const row = await this.traces.get(turn.run);
    if (!row) return;
    let traceparent = parseTraceParent(row.trace_context ?? undefined);
    if (!traceparent) {
      const traceId = randomTraceId();
      const name = `invoke_agent ${turn.agentName}`;
      const flags = this.sampled(traceId, name) ? 1 : 0;
      const fresh = formatTraceParent({ traceId, spanId: randomSpanId(), flags });
      traceparent = parseTraceParent(await this.traces.adopt(turn.run, fresh))!;
    }
    const known = this.open.get(turn.run);
    if (known) known.turn = turn;
    else this.remember(turn.run, traceparent, Date.parse(row.started_at), turn).caller = callerSpan(row.caller_trace);
  }

  private turnTrace(run: string): TurnTrace | undefined {
    return this.open.get(run) ?? this.ended.get(run) ?? this.endedBefore.get(run);
  }

  /** A turn ended (here, or elsewhere and this process saw the event): its root span. */
  private turnEnded(e: StoredEvent): void {
    const run = e.run;
    if (!run) return;
    const t = this.open.get(run);
    if (t) {
      this.open.delete(run);
      if (this.ended.size >= RECENTLY_ENDED) {
        this.endedBefore = this.ended;
        this.ended = new Map();
      }
      this.ended.set(run, t);
      if ((t.traceparent.flags & 1) === 0) return;
      // The common case, a turn this process drove: no promise, no read.
      if (t.turn) return this.rootSpan(e, t, t.turn);
    }
    this.track(this.rootFromStore(e, t));
  }

  /** The root span of a turn this process did not drive (a cancel of a parked turn, another node): the store has its trace. */
  private async rootFromStore(e: StoredEvent, known: TurnTrace | undefined): Promise<void> {
    let t: Pick<TurnTrace, "traceparent" | "startedAt" | "provider" | "caller"> | undefined = known;
    if (!t) {
      const row = await this.traces.get(e.run!);
      const traceparent = parseTraceParent(row?.trace_context ?? undefined);
      if (!row || !traceparent || (traceparent.flags & 1) === 0) return;
      t = { traceparent, startedAt: Date.parse(row.started_at), caller: callerSpan(row.caller_trace) };
    }
    this.rootSpan(e, t, await this.describeTurn(e));
  }

  /** Records the turn's root span, `invoke_agent {agent}`, from its start to this end, with the IDs chosen at its start. */
  private rootSpan(e: StoredEvent, t: Pick<TurnTrace, "traceparent" | "startedAt" | "provider" | "caller">, turn: TurnTelemetry): void {
    const data = e.data as Partial<EventDataMap["turn.failed"]>;
    const outcome = e.type.slice(EVENT_TYPE_PREFIX.length + "turn.".length);
    const a: Attributes = {
      "gen_ai.agent.id": turn.agentId,
      "gen_ai.agent.name": turn.agentName,
      "gen_ai.conversation.id": turn.conversationId,
      "gen_ai.operation.name": "invoke_agent",
      "wardrik.org": turn.org,
      "wardrik.turn.id": turn.run,
    };
    if (turn.agentDescription) a["gen_ai.agent.description"] = turn.agentDescription;
    if (t.provider) a["gen_ai.provider.name"] = t.provider;
    a["wardrik.turn.outcome"] = outcome;
    if (data.iterations !== undefined) a["wardrik.turn.iterations"] = data.iterations;
    if (data.spend_usd !== undefined) a["wardrik.turn.spend_usd"] = data.spend_usd;
    if (outcome === "cancelled") a["wardrik.turn.reason_code"] = data.code ?? "cancelled";
    const { traceId, spanId } = t.traceparent;
    const root = new RecordedSpan(
      this.source,
      `invoke_agent ${turn.agentName}`,
      SpanKind.INTERNAL,
      traceId,
      spanId,
      t.caller,
      t.startedAt,
      a,
      true,
    );
    root.endMs = Date.parse(e.time);
    if (outcome === "failed" && data.code) root.failed(data.code);
    this.processor.onEnd(root);
  }

  private async describeTurn(e: StoredEvent): Promise<TurnTelemetry> {
    const agent = await this.deps.store.agents.get(e.agent);
    return {
      run: e.run!,
      agentId: e.agent,
      agentName: agent?.name ?? e.agent,
      agentDescription: "",
      org: e.org,
      conversationId: (e.data as { conversation_id?: string }).conversation_id ?? "",
    };
  }

  private track(p: Promise<void>): void {
    const tracked = p.catch((err: unknown) => this.deps.log("warn", "a turn's trace could not be completed", { err: String(err) }));
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
  }
}
