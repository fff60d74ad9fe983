import {
  APICallError,
  type JSONSchema7,
  type LanguageModelV3,
  type LanguageModelV3FunctionTool,
  type LanguageModelV3Prompt,
} from "@ai-sdk/provider";
import { TimeSlices } from "./time-slices.js";

export interface ModelPrice {
  input: number;
  output: number;
  cached_input?: number;
}

export interface ModelReply {
  text: string;
  toolCalls: { toolCallId: string; toolName: string; input: string }[];
  usage: { input: number; output: number; cached: number };
  finishReason: string;
  costUsd: number;
}

export interface CallModelOptions {
  model: LanguageModelV3;
  prompt: LanguageModelV3Prompt;
  tools: LanguageModelV3FunctionTool[];
  /** The JSON Schema a final reply must fit: sent to providers that take one (structured output). */
  output?: Record<string, unknown> | undefined;
  signal: AbortSignal;
  retries: number;
  price?: ModelPrice | undefined;
  onDelta?: (text: string) => void;
  onRetry?: (attempt: number, delayMs: number, error: string) => void;
  /** Test hook: base backoff in ms. */
  backoffMs?: number;
}

export class ModelCallError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    /** The provider's HTTP status, when it answered with one. */
    readonly status?: number,
  ) {
    super(message);
  }
}

/** Costs in USD from token counts and per-million prices. */
export function costOf(usage: ModelReply["usage"], price: ModelPrice | undefined): number {
  if (!price) return 0;
  const cachedPrice = price.cached_input ?? price.input;
  const uncached = Math.max(0, usage.input - usage.cached);
  return (uncached * price.input + usage.cached * cachedPrice + usage.output * price.output) / 1_000_000;
}

/** One model call, streamed, with retries on transient failures (429, 5xx, network). */
export async function callModel(opts: CallModelOptions): Promise<ModelReply> {
  for (let attempt = 0; ; attempt++) {
    if (opts.signal.aborted) throw abortReason(opts.signal);
    try {
      return await streamOnce(opts);
    } catch (err) {
      if (opts.signal.aborted) throw opts.signal.reason ?? err;
      const { retryable, message, retryAfterMs, status } = classify(err);
      if (!retryable || attempt >= opts.retries) {
        throw new ModelCallError(attempt > 0 ? `${message} (after ${attempt + 1} attempts)` : message, retryable, status);
      }
      const base = opts.backoffMs ?? 500;
      const backoff = Math.min(MAX_BACKOFF_MS, base * 2 ** attempt) * (0.5 + Math.random() / 2);
      const delay = retryAfterMs !== undefined && retryAfterMs < MAX_HINT_MS ? retryAfterMs : backoff;
      opts.onRetry?.(attempt + 1, delay, message);
      await sleep(delay, opts.signal);
    }
  }
}

/** Backoff between attempts doubles up to this. */
const MAX_BACKOFF_MS = 30_000;
/**
 * A provider's hint to wait this long or longer is not followed (the AI SDK's
 * rule, after the OpenAI and Anthropic clients): a turn should not sit for
 * minutes on one header; capped backoff tries again sooner.
 */
const MAX_HINT_MS = 60_000;

async function streamOnce(opts: CallModelOptions): Promise<ModelReply> {
  const { stream } = await opts.model.doStream({
    prompt: opts.prompt,
    tools: opts.tools.length > 0 ? opts.tools : undefined,
    ...(opts.output ? { responseFormat: { type: "json" as const, schema: opts.output as JSONSchema7, name: "output" } } : {}),
    abortSignal: opts.signal,
  });
  let text = "";
  const toolCalls: ModelReply["toolCalls"] = [];
  let usage = { input: 0, output: 0, cached: 0 };
  let finishReason = "stop";
  const reader = stream.getReader();
  const slices = new TimeSlices();
  try {
    for (;;) {
      await slices.yieldIfDue();
      const { done, value: part } = await reader.read();
      if (done) break;
      switch (part.type) {
        case "text-delta":
          // No provider means a NUL, and no database column may hold one (PostgreSQL refuses it).
          text += part.delta.includes("\u0000") ? part.delta.replaceAll("\u0000", "") : part.delta;
          if (part.delta) opts.onDelta?.(part.delta);
          break;
        case "tool-call":
          if (!part.providerExecuted) toolCalls.push({ toolCallId: part.toolCallId, toolName: part.toolName, input: part.input });
          break;
        case "finish":
          usage = {
            input: part.usage.inputTokens.total ?? 0,
            output: part.usage.outputTokens.total ?? 0,
            cached: part.usage.inputTokens.cacheRead ?? 0,
          };
          finishReason = part.finishReason.unified;
          break;
        case "error":
          throw part.error;
        default:
          break;
      }
    }
  } finally {
    reader.releaseLock();
  }
  return { text, toolCalls, usage, finishReason, costUsd: costOf(usage, opts.price) };
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
]);
/** Error types providers send in a stream that mean "try again later". */
const TRANSIENT_TYPES = new Set(["overloaded_error", "server_error", "rate_limit_error", "api_error", "internal_server_error"]);

/** The network error code somewhere down an error's cause chain, if any. */
function networkCode(err: unknown): string | undefined {
  let cur: unknown = err;
  for (let depth = 0; depth < 6 && cur; depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === "string" && NETWORK_CODES.has(code)) return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

function classify(err: unknown): { retryable: boolean; message: string; retryAfterMs?: number; status?: number } {
  if (APICallError.isInstance(err)) {
    const status = err.statusCode;
    const retryAfterMs = retryHint(err.responseHeaders);
    // A stream cut off mid-way arrives as an APICallError with status 200 and the socket error underneath.
    const code = networkCode(err);
    if (code && (status === undefined || status < 300)) {
      return { retryable: true, message: `network error calling the model: the connection failed (${code}): ${err.message}` };
    }
    const retryable = err.isRetryable || status === 429 || (status !== undefined && status >= 500);
    const msg = `model API error${status ? ` ${status}` : ""}: ${err.message}`;
    return {
      retryable,
      message: msg,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      ...(status !== undefined ? { status } : {}),
    };
  }
  if (err instanceof Error) {
    const code = networkCode(err);
    if (code || err.message === "fetch failed")
      return { retryable: true, message: `network error calling the model: ${code ?? err.message}` };
    return { retryable: false, message: err.message };
  }
  // Providers pass errors that arrive inside a stream as plain objects ({type, message} or {error: {...}}).
  if (typeof err === "object" && err !== null) {
    const outer = err as { message?: unknown; type?: unknown; error?: unknown; isRetryable?: unknown; statusCode?: unknown };
    const inner = (typeof outer.error === "object" && outer.error !== null ? outer.error : outer) as {
      message?: unknown;
      type?: unknown;
      code?: unknown;
    };
    const type = typeof inner.type === "string" ? inner.type : typeof outer.type === "string" ? outer.type : undefined;
    const text =
      typeof inner.message === "string" ? inner.message : typeof outer.message === "string" ? outer.message : JSON.stringify(err);
    const status = typeof outer.statusCode === "number" ? outer.statusCode : undefined;
    const retryable =
      outer.isRetryable === true || (type !== undefined && TRANSIENT_TYPES.has(type)) || (status !== undefined && status >= 500);
    return { retryable, message: `model API error${type ? ` (${type})` : ""}: ${text}`, ...(status !== undefined ? { status } : {}) };
  }
  return { retryable: false, message: String(err) };
}

/**
 * How long the provider asks to wait, in ms: `retry-after-ms` first (OpenAI,
 * Azure), then `retry-after` in seconds or as an HTTP date. Undefined when
 * neither is given or readable, or the time asked for has passed.
 */
export function retryHint(headers: Record<string, string> | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const header = (name: string) =>
    Object.entries(headers)
      .find(([k]) => k.toLowerCase() === name)?.[1]
      ?.trim();
  const ms = header("retry-after-ms");
  if (ms && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const after = header("retry-after");
  if (!after) return undefined;
  if (/^\d+(\.\d+)?$/.test(after)) return Number(after) * 1000;
  const date = Date.parse(after);
  return Number.isNaN(date) || date < now ? undefined : date - now;
}

/** What an aborted call rejects with: the signal's own reason, as callers compare it (a cancel, a kill, a timeout). */
function abortReason(signal: AbortSignal): Error {
  return (signal.reason ?? new Error("The model call was aborted.")) as Error;
}

/** Waits `ms`, or rejects at once when the signal aborts, including when it aborted before the wait began. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
