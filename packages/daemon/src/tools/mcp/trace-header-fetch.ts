import { parseTraceParent } from "@wardrik/protocol";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";

/**
 * Wraps the fetch of a streamable-HTTP MCP connection (plain, or one that adds an OAuth grant). A tool call that carries
 * trace context in `params._meta.traceparent` (where the MCP conventions put
 * it, for every transport) also gets it as the `traceparent` HTTP header, so
 * an HTTP server or proxy that only reads headers joins the same trace.
 */
export function traceHeaderFetch(inner: FetchLike): FetchLike {
  return (url, init) => {
    const body = init?.body;
    // Most messages carry no trace context: look before parsing.
    const traceparent = typeof body === "string" && body.includes('"traceparent"') ? traceparentOf(body) : undefined;
    if (traceparent === undefined) return inner(url, init);
    const headers = new Headers(init?.headers);
    headers.set("traceparent", traceparent);
    return inner(url, { ...init, headers });
  };
}

function traceparentOf(body: string): string | undefined {
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    return undefined;
  }
  for (const m of Array.isArray(message) ? message : [message]) {
    const value = (m as { params?: { _meta?: { traceparent?: unknown } } } | null)?.params?._meta?.traceparent;
    if (typeof value === "string" && parseTraceParent(value)) return value;
  }
  return undefined;
}
