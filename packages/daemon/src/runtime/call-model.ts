import { APICallError, type LanguageModelV3, type LanguageModelV3FunctionTool, type LanguageModelV3Prompt } from "@ai-sdk/provider";

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
    try {
      return await streamOnce(opts);
    } catch (err) {
      if (opts.signal.aborted) throw opts.signal.reason ?? err;
      const { retryable, message, retryAfterMs } = classify(err);
      if (!retryable || attempt >= opts.retries) {
        throw new ModelCallError(attempt > 0 ? `${message} (after ${attempt + 1} attempts)` : message, retryable);
      }
      const base = opts.backoffMs ?? 500;
      const delay = retryAfterMs ?? Math.min(30_000, base * 2 ** attempt) * (0.5 + Math.random() / 2);
      opts.onRetry?.(attempt + 1, delay, message);
      await sleep(delay, opts.signal);
    }
  }
}

async function streamOnce(opts: CallModelOptions): Promise<ModelReply> {
  const { stream } = await opts.model.doStream({
    prompt: opts.prompt,
    tools: opts.tools.length > 0 ? opts.tools : undefined,
    abortSignal: opts.signal,
  });
  let text = "";
  const toolCalls: ModelReply["toolCalls"] = [];
  let usage = { input: 0, output: 0, cached: 0 };
  let finishReason = "stop";
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value: part } = await reader.read();
      if (done) break;
      switch (part.type) {
        case "text-delta":
          text += part.delta;
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

function classify(err: unknown): { retryable: boolean; message: string; retryAfterMs?: number } {
  if (APICallError.isInstance(err)) {
    const status = err.statusCode;
    const retryable = err.isRetryable || status === 429 || (status !== undefined && status >= 500);
    const header = err.responseHeaders?.["retry-after"];
    const retryAfterMs = header !== undefined ? parseRetryAfter(header) : undefined;
    const msg = `model API error${status ? ` ${status}` : ""}: ${err.message}`;
    return { retryable, message: msg, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  }
  const message = err instanceof Error ? err.message : String(err);
  // Connection failures surface as TypeError("fetch failed") or errors with a cause code.
  const cause = err instanceof Error ? (err.cause as { code?: string } | undefined) : undefined;
  const network = message === "fetch failed" || ["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "UND_ERR_SOCKET"].includes(cause?.code ?? "");
  return { retryable: network, message: network ? `network error calling the model: ${cause?.code ?? message}` : message };
}

function parseRetryAfter(value: string): number | undefined {
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
