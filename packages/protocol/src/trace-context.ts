/**
 * W3C Trace Context (`traceparent`), as the daemon sends it to workers and MCP
 * servers: `VERSION-TRACEID-SPANID-FLAGS` in lower-case hex. Parsed here, once,
 * so the daemon and the SDK agree on what a usable value is.
 */

export interface TraceParent {
  /** 32 hex digits, not all zero. */
  traceId: string;
  /** 16 hex digits, not all zero. */
  spanId: string;
  /** The trace flags byte; bit 0 says the caller samples this trace. */
  flags: number;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * The parts of a `traceparent` value, or undefined when it is not one the
 * specification lets a receiver use (version ff, zero IDs, extra fields on
 * version 00). Unknown later versions are read by their first four fields,
 * as the specification asks.
 */
export function parseTraceParent(value: string | undefined): TraceParent | undefined {
  if (value === undefined) return undefined;
  const m = TRACEPARENT.exec(value.trim());
  if (!m) return undefined;
  const [, version, traceId, spanId, flags, rest] = m;
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId!) || /^0+$/.test(spanId!)) return undefined;
  return { traceId: traceId!, spanId: spanId!, flags: Number.parseInt(flags!, 16) };
}

/** The version-00 `traceparent` of a span. */
export function formatTraceParent(t: TraceParent): string {
  return `00-${t.traceId}-${t.spanId}-${(t.flags & 0xff).toString(16).padStart(2, "0")}`;
}
