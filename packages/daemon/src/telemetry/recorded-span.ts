/**
 * A span as Wardrik records it: one object that the OpenTelemetry SDK's batch
 * processor and OTLP exporters take as it is (it is the SDK's ReadableSpan).
 *
 * Why not the SDK's own Tracer and Span: Wardrik knows, when it records a
 * span, everything the SDK's span machinery would work out (the IDs, chosen
 * here so a tool and a log line can name the span before it ends; the parent,
 * passed explicitly; a fixed set of attributes of known types). That machinery
 * (sanitised copies of the attributes, span limits, the SDK's own metrics,
 * several objects and clock reads a span) cost W1 about a fifth of a turn
 * (bench/telemetry.ts); a span made here is two objects. The SDK still
 * samples (its sampler), batches (BatchSpanProcessor, OTEL_BSP_*) and exports
 * (its OTLP exporters).
 */
import {
  SpanStatusCode,
  type Attributes,
  type HrTime,
  type Link,
  type SpanContext,
  type SpanKind,
  type SpanStatus,
} from "@opentelemetry/api";
import type { Resource } from "@opentelemetry/resources";
import type { ReadableSpan, TimedEvent } from "@opentelemetry/sdk-trace-base";
import { formatTraceParent } from "@wardrik/protocol";
import type { Started } from "../runtime/telemetry.js";

type InstrumentationScope = ReadableSpan["instrumentationScope"];

const NO_LINKS: Link[] = [];
const NO_EVENTS: TimedEvent[] = [];
const UNSET: SpanStatus = { code: SpanStatusCode.UNSET };

/** What every span of this process shares. */
export interface SpanSource {
  resource: Resource;
  scope: InstrumentationScope;
}

/** A span (ReadableSpan): what differs from span to span is a field, what never does is a getter (a smaller object). */
export class RecordedSpan implements ReadableSpan {
  /** Epoch milliseconds (fractional). */
  endMs: number;
  status: SpanStatus = UNSET;

  constructor(
    private readonly source: SpanSource,
    readonly name: string,
    readonly kind: SpanKind,
    readonly traceId: string,
    readonly spanId: string,
    /** Undefined for a root span. */
    readonly parentSpanContext: SpanContext | undefined,
    /** Epoch milliseconds (fractional). */
    readonly startMs: number,
    readonly attributes: Attributes,
    /** False: the sampler left it out; it exists only for its IDs (a tool's traceparent, a log line). */
    readonly sampled: boolean,
  ) {
    this.endMs = startMs;
  }

  get resource(): Resource {
    return this.source.resource;
  }

  get instrumentationScope(): InstrumentationScope {
    return this.source.scope;
  }

  get ended(): boolean {
    return true;
  }

  get links(): Link[] {
    return NO_LINKS;
  }

  get events(): TimedEvent[] {
    return NO_EVENTS;
  }

  get droppedAttributesCount(): number {
    return 0;
  }

  get droppedEventsCount(): number {
    return 0;
  }

  get droppedLinksCount(): number {
    return 0;
  }

  spanContext(): SpanContext {
    return { traceId: this.traceId, spanId: this.spanId, traceFlags: this.sampled ? 1 : 0 };
  }

  get startTime(): HrTime {
    return hrTime(this.startMs);
  }

  get endTime(): HrTime {
    return hrTime(this.endMs);
  }

  get duration(): HrTime {
    return hrTime(this.endMs - this.startMs);
  }

  /** The work failed: `error.type` (the conventions' attribute) and an ERROR status. */
  failed(type: string, message?: string): void {
    this.attributes["error.type"] = type;
    this.status = message === undefined ? { code: SpanStatusCode.ERROR } : { code: SpanStatusCode.ERROR, message };
  }
}

/** Milliseconds as OpenTelemetry's [seconds, nanoseconds]. */
function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  const nanos = Math.round((ms - seconds * 1000) * 1e6);
  return nanos < 1e9 ? [seconds, nanos] : [seconds + 1, nanos - 1e9];
}

/** A model or tool call's span while the call runs: what the engine holds from its start to its end. */
export class CallSpan<C> extends RecordedSpan implements Started {
  /** The call, for the log line at its end (dropped then). */
  call: C | undefined;
  /** performance.now() at the start: the duration's clock. */
  readonly perfStart = performance.now();

  get traceparent(): string {
    return formatTraceParent({ traceId: this.traceId, spanId: this.spanId, flags: this.sampled ? 1 : 0 });
  }
}
