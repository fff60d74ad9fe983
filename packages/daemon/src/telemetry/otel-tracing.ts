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
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from "@opentelemetry/api";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor, SamplingDecision } from "@opentelemetry/sdk-trace-base";
import { formatTraceParent, parseTraceParent, shortType, type EventDataMap, type TraceParent } from "@wardrik/protocol";
import { ModelCallError, type ModelReply } from "../runtime/call-model.js";
import { TurnStop } from "../runtime/engine-options.js";
import type { ModelCallTelemetry, Telemetry, ToolCallTelemetry, TurnTelemetry } from "../runtime/telemetry.js";
import type { NewCall } from "../store/calls.js";
import type { Writer } from "../store/store.js";
import type { ToolOutcome } from "../tools/toolset.js";
import { inputMessages, outputMessages, systemInstructions } from "./gen-ai-content.js";
import { buildSampler, FixableIds, outcomeCode, providerName, randomSpanId, randomTraceId, routeDiagnostics } from "./otel-parts.js";
import type { TracingDeps, DaemonTracing } from "./start-tracing.js";
import type { TracingSettings } from "./tracing-settings.js";
import { TurnTraces } from "../store/turn-traces.js";
import type { StoredEvent } from "../events/event-bus.js";

/** A turn's trace as this process knows it. */
interface TurnTrace {
  traceparent: TraceParent;
  /** The context whose span is the turn's root: the parent of every span of the turn. */
  parent: Context;
  startedAt: number;
  turn: TurnTelemetry | undefined;
  /** The provider of the turn's latest model call, for the root span. */
  provider?: string;
}

/** Turns that ended are kept this long (by count) for spans recorded just after the end (calls decided in the ending commit). */
const RECENTLY_ENDED = 1000;
const MAX_OPEN = 100_000;

export function createOtelTracing(settings: TracingSettings, deps: TracingDeps): DaemonTracing {
  routeDiagnostics(deps.log);
  // No global context manager: Node 20's AsyncLocalStorage hooks every promise of the process, which cost
  // W1 about a tenth of its time (bench/telemetry.ts). Spans get their parent explicitly, and log lines find
  // their trace by the turn they name (`run`).
  const ids = new FixableIds();
  const sampler = buildSampler(settings.sampler, settings.samplerArg);
  const Exporter = settings.protocol === "http/json" ? JsonTraceExporter : ProtobufTraceExporter;
  const provider = new BasicTracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({ ...settings.resource, "service.name": settings.serviceName, "service.version": deps.version }),
    ),
    sampler,
    idGenerator: ids,
    spanProcessors: [new BatchSpanProcessor(new Exporter({ url: settings.url, headers: settings.headers }), settings.batch)],
  });
  const tracing = new OtelTracing(provider.getTracer("wardrik", deps.version), ids, settings, deps, (traceId, name) => {
    return sampler.shouldSample(ROOT_CONTEXT, traceId, name, SpanKind.INTERNAL, {}, []).decision === SamplingDecision.RECORD_AND_SAMPLED;
  });
  return {
    telemetry: tracing,
    settings,
    logFields: (fields) => (typeof fields?.run === "string" ? tracing.logFields(fields.run) : undefined),
    shutdown: async () => {
      await tracing.close();
      await provider.shutdown();
    },
  };
}

class OtelTracing implements Telemetry {
  private readonly open = new Map<string, TurnTrace>();
  private readonly ended = new Map<string, TurnTrace>();
  private readonly pending = new Set<Promise<void>>();
  private readonly traces: TurnTraces;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly tracer: Tracer,
    private readonly ids: FixableIds,
    private readonly settings: TracingSettings,
    private readonly deps: TracingDeps,
    private readonly sampled: (traceId: string, name: string) => boolean,
  ) {
    this.traces = new TurnTraces(deps.store.db);
    this.unsubscribe = deps.bus.subscribe("*", (e) => {
      const type = shortType(e.type);
      if (type === "turn.completed" || type === "turn.failed" || type === "turn.cancelled") this.track(this.turnEnded(e));
    });
  }

  turnStarting(w: Writer, turn: TurnTelemetry): string {
    const traceparent = this.newTrace(`invoke_agent ${turn.agentName}`);
    const startedAt = Date.parse(w.now);
    w.afterCommit(() => this.remember(turn.run, traceparent, startedAt, turn));
    return formatTraceParent(traceparent);
  }

  async inTurn<T>(turn: TurnTelemetry, fn: () => Promise<T>): Promise<T> {
    const known = this.open.get(turn.run) ?? (await this.load(turn));
    if (known) known.turn = turn;
    return fn();
  }

  /** A log line about turn `run`: its trace and root span, while this process knows the turn. */
  logFields(run: string): Record<string, string> | undefined {
    const t = this.turnTrace(run);
    return t ? { trace_id: t.traceparent.traceId, span_id: t.traceparent.spanId } : undefined;
  }

  modelCall(call: ModelCallTelemetry, fn: () => Promise<ModelReply>): Promise<ModelReply> {
    const t = this.turnTrace(call.run);
    const provider = providerName(call.provider);
    if (t) t.provider = provider;
    const span = this.tracer.startSpan(
      `chat ${call.modelId}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          ...this.turnAttributes(call),
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": provider,
          "gen_ai.request.model": call.modelId,
          "wardrik.model": call.ref,
          "wardrik.turn.iteration": call.iteration,
        },
      },
      t?.parent ?? ROOT_CONTEXT,
    );
    if (this.settings.captureContent && span.isRecording()) {
      const { instructions, prompt } = call.content();
      span.setAttribute("gen_ai.system_instructions", this.deps.redact(systemInstructions(instructions)));
      span.setAttribute("gen_ai.input.messages", this.deps.redact(inputMessages(prompt)));
    }
    const started = performance.now();
    return (async () => {
      try {
        const reply = await fn();
        span.setAttributes({
          "gen_ai.usage.input_tokens": reply.usage.input,
          "gen_ai.usage.output_tokens": reply.usage.output,
          "gen_ai.usage.cache_read.input_tokens": reply.usage.cached,
          "gen_ai.response.finish_reasons": [reply.finishReason],
          "wardrik.cost_usd": reply.costUsd,
          "wardrik.tool_calls": reply.toolCalls.length,
        });
        if (this.settings.captureContent && span.isRecording())
          span.setAttribute("gen_ai.output.messages", this.deps.redact(outputMessages(reply)));
        this.deps.log("debug", "model call ended", {
          ...spanFields(span),
          agent: call.agentId,
          run: call.run,
          model: call.ref,
          ms: Math.round(performance.now() - started),
          input_tokens: reply.usage.input,
          output_tokens: reply.usage.output,
        });
        return reply;
      } catch (err) {
        failed(span, errorType(err));
        throw err;
      } finally {
        span.end();
      }
    })();
  }

  toolCall<T extends { outcome: ToolOutcome }>(call: ToolCallTelemetry, fn: (traceparent: string | undefined) => Promise<T>): Promise<T> {
    const t = this.turnTrace(call.run);
    const parent = t?.parent ?? ROOT_CONTEXT;
    const span = this.tracer.startSpan(
      `execute_tool ${call.tool}`,
      { kind: SpanKind.INTERNAL, attributes: this.toolAttributes(call) },
      parent,
    );
    if (this.settings.captureContent && span.isRecording()) {
      span.setAttribute("gen_ai.tool.call.arguments", this.deps.redact(JSON.stringify(call.args ?? {})));
    }
    const sc = span.spanContext();
    const traceparent = formatTraceParent({ traceId: sc.traceId, spanId: sc.spanId, flags: sc.traceFlags });
    const started = performance.now();
    return (async () => {
      try {
        const result = await fn(traceparent);
        const code = outcomeCode(result.outcome);
        span.setAttribute("wardrik.call.outcome", code);
        if (result.outcome.ok) {
          if (this.settings.captureContent && span.isRecording()) {
            span.setAttribute("gen_ai.tool.call.result", this.deps.redact(JSON.stringify(result.outcome.output ?? null)));
          }
        } else failed(span, code, this.settings.captureContent ? this.deps.redact(result.outcome.error) : undefined);
        this.deps.log("debug", "tool call ended", {
          ...spanFields(span),
          agent: call.agentId,
          run: call.run,
          call: call.callId,
          tool: call.tool,
          outcome: code,
          ms: Math.round(performance.now() - started),
        });
        return result;
      } catch (err) {
        failed(span, errorType(err));
        throw err;
      } finally {
        span.end();
      }
    })();
  }

  callsPlanned(turn: TurnTelemetry, calls: readonly NewCall[]): void {
    const parent = this.turnTrace(turn.run)?.parent;
    if (!parent) return;
    for (const c of calls) {
      if (c.status === "running") continue; // its span comes when it runs
      const outcome = c.status === "waiting" ? "approval_requested" : (c.errorCode ?? c.status);
      const attributes = {
        ...this.toolAttributes({ ...turn, callId: c.id, tool: c.tool, description: "", decision: c.decision, attempt: 0, args: c.args }),
        "wardrik.call.outcome": outcome,
      };
      const span = this.tracer.startSpan(`execute_tool ${c.tool}`, { kind: SpanKind.INTERNAL, attributes }, parent);
      if (c.status !== "waiting") failed(span, outcome);
      span.end();
    }
  }

  async close(): Promise<void> {
    this.unsubscribe();
    await Promise.allSettled([...this.pending]);
  }

  // ---- turns ----

  private newTrace(rootName: string): TraceParent {
    const traceId = randomTraceId();
    return { traceId, spanId: randomSpanId(), flags: this.sampled(traceId, rootName) ? 1 : 0 };
  }

  private remember(run: string, traceparent: TraceParent, startedAt: number, turn: TurnTelemetry | undefined): TurnTrace {
    if (this.open.size >= MAX_OPEN) this.open.delete(this.open.keys().next().value!);
    const parent = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: traceparent.traceId,
      spanId: traceparent.spanId,
      traceFlags: traceparent.flags,
      isRemote: true,
    });
    const t: TurnTrace = { traceparent, parent, startedAt, turn };
    this.open.set(run, t);
    return t;
  }

  /** A turn this process did not start: its stored trace, or a new one for a turn that started untraced. */
  private async load(turn: TurnTelemetry): Promise<TurnTrace | undefined> {
    const row = await this.traces.get(turn.run);
    if (!row) return undefined;
    let traceparent = parseTraceParent(row.trace_context ?? undefined);
    if (!traceparent) {
      const fresh = formatTraceParent(this.newTrace(`invoke_agent ${turn.agentName}`));
      traceparent = parseTraceParent(await this.traces.adopt(turn.run, fresh))!;
    }
    return this.open.get(turn.run) ?? this.remember(turn.run, traceparent, Date.parse(row.started_at), turn);
  }

  private turnTrace(run: string): TurnTrace | undefined {
    return this.open.get(run) ?? this.ended.get(run);
  }

  /** Exports the turn's root span, `invoke_agent {agent}`, from its start to this end. */
  private async turnEnded(e: StoredEvent): Promise<void> {
    const run = e.run;
    if (!run) return;
    let t = this.open.get(run);
    if (t) {
      this.open.delete(run);
      if (this.ended.size >= RECENTLY_ENDED) this.ended.delete(this.ended.keys().next().value!);
      this.ended.set(run, t);
    } else {
      // Ended here but driven elsewhere (a cancel of a parked turn, another node): the store has its trace.
      const row = await this.traces.get(run);
      const traceparent = parseTraceParent(row?.trace_context ?? undefined);
      if (!row || !traceparent) return;
      t = { traceparent, parent: ROOT_CONTEXT, startedAt: Date.parse(row.started_at), turn: undefined };
    }
    if ((t.traceparent.flags & 1) === 0) return;
    const turn = t.turn ?? (await this.describeTurn(e));
    const data = e.data as Partial<EventDataMap["turn.failed"]>;
    const outcome = shortType(e.type).slice("turn.".length);
    const attributes: Attributes = {
      ...this.turnAttributes(turn),
      "gen_ai.operation.name": "invoke_agent",
      "wardrik.org": turn.org,
      "wardrik.turn.id": turn.run,
      ...(turn.agentDescription ? { "gen_ai.agent.description": turn.agentDescription } : {}),
      ...(t.provider ? { "gen_ai.provider.name": t.provider } : {}),
      "wardrik.turn.outcome": outcome,
      ...(data.iterations !== undefined ? { "wardrik.turn.iterations": data.iterations } : {}),
      ...(data.spend_usd !== undefined ? { "wardrik.turn.spend_usd": data.spend_usd } : {}),
    };
    const ids = t.traceparent;
    const span = this.ids.fixed(ids, () =>
      this.tracer.startSpan(`invoke_agent ${turn.agentName}`, { root: true, kind: SpanKind.INTERNAL, startTime: t.startedAt, attributes }),
    );
    if (outcome === "failed" && data.code) failed(span, data.code);
    if (outcome === "cancelled") span.setAttribute("wardrik.turn.reason_code", data.code ?? "cancelled");
    span.end(Date.parse(e.time));
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

  // ---- attributes ----

  /** On every span of a turn (backends filter child spans by agent and conversation); the root says more. */
  private turnAttributes(t: TurnTelemetry): Attributes {
    return {
      "gen_ai.agent.id": t.agentId,
      "gen_ai.agent.name": t.agentName,
      "gen_ai.conversation.id": t.conversationId,
    };
  }

  private toolAttributes(c: ToolCallTelemetry): Attributes {
    return {
      ...this.turnAttributes(c),
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": c.tool,
      "gen_ai.tool.call.id": c.callId,
      "gen_ai.tool.type": "function",
      ...(c.description ? { "gen_ai.tool.description": c.description } : {}),
      "wardrik.call.decision": c.decision ?? "none",
      ...(c.attempt > 0 ? { "wardrik.call.attempt": c.attempt } : {}),
    };
  }
}

/** A log line written about a span names it (its trace and its own ID). */
function spanFields(span: Span): { trace_id: string; span_id: string } {
  const sc = span.spanContext();
  return { trace_id: sc.traceId, span_id: sc.spanId };
}

function errorType(err: unknown): string {
  if (err instanceof TurnStop) return err.why;
  if (err instanceof ModelCallError) return "model_error";
  return err instanceof Error ? err.name : "_OTHER";
}

function failed(span: Span, type: string, message?: string): void {
  span.setAttribute("error.type", type);
  span.setStatus({ code: SpanStatusCode.ERROR, ...(message !== undefined ? { message } : {}) });
}
