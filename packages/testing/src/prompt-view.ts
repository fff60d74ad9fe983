/** What the scripted model reads from a prompt, and the small helpers it answers with. */
import { APICallError } from "@ai-sdk/provider";
import type { LanguageModelV3Prompt, LanguageModelV3ToolResultOutput, LanguageModelV3Usage } from "@ai-sdk/provider";
import { TEMPLATE_PATTERN, type ScriptError, type ScriptToolResult, type ScriptUsage } from "./script-types.js";

export interface PromptView {
  stepIndex: number;
  lastUserMessage: string;
  lastToolResults: ScriptToolResult[];
  chars: number;
}

export function readPrompt(prompt: LanguageModelV3Prompt): PromptView {
  let lastUser = -1;
  for (let i = prompt.length - 1; i >= 0; i--) {
    if (prompt[i]!.role === "user") {
      lastUser = i;
      break;
    }
  }
  const userMessage = prompt[lastUser];
  const lastUserMessage = userMessage?.role === "user" ? userMessage.content.map((p) => (p.type === "text" ? p.text : "")).join("") : "";
  const stepIndex = prompt.slice(lastUser + 1).filter((m) => m.role === "assistant").length;

  // The trailing tool messages answer the latest assistant message's calls.
  const lastToolResults: ScriptToolResult[] = [];
  for (let i = prompt.length - 1; i > lastUser; i--) {
    const message = prompt[i]!;
    if (message.role !== "tool") break;
    const results: ScriptToolResult[] = [];
    for (const part of message.content) {
      if (part.type === "tool-result") results.push({ toolName: fromModelToolName(part.toolName), output: outputValue(part.output) });
    }
    lastToolResults.unshift(...results);
  }

  let chars = 0;
  for (const message of prompt) chars += messageChars(message);
  return { stepIndex, lastUserMessage, lastToolResults, chars };
}

// Callers that resend the same message objects (a runtime's prompt cache) pay for each message once.
const charsOf = new WeakMap<object, number>();

export function messageChars(message: LanguageModelV3Prompt[number]): number {
  const known = charsOf.get(message);
  if (known !== undefined) return known;
  let chars = 0;
  if (message.role === "system") chars = message.content.length;
  else {
    for (const part of message.content) {
      if (part.type === "text" || part.type === "reasoning") chars += part.text.length;
      else if (part.type === "tool-call") chars += part.toolName.length + (JSON.stringify(part.input) ?? "").length;
      else if (part.type === "tool-result") chars += resultText(outputValue(part.output)).length;
    }
  }
  charsOf.set(message, chars);
  return chars;
}

export function outputValue(output: LanguageModelV3ToolResultOutput): unknown {
  switch (output.type) {
    case "text":
    case "error-text":
    case "json":
    case "error-json":
      return output.value;
    case "execution-denied":
      return output.reason ?? "execution denied";
    case "content":
      return output.value.map((p) => (p.type === "text" ? p.text : "")).join("");
  }
}

/**
 * `{{result}}` as text: a string as is, an object's string `content` field (what a
 * file read returns), else JSON. Runtimes may send object outputs as JSON text, so
 * a string holding such an object is read the same way.
 */
export function resultText(output: unknown): string {
  if (typeof output === "string") {
    if (output.startsWith("{")) {
      try {
        const parsed: unknown = JSON.parse(output);
        if (hasStringContent(parsed)) return parsed.content;
      } catch {
        // Not JSON: the text itself is the result.
      }
    }
    return output;
  }
  if (hasStringContent(output)) return output.content;
  return JSON.stringify(output) ?? String(output);
}

export function hasStringContent(value: unknown): value is { content: string } {
  return typeof value === "object" && value !== null && typeof (value as { content?: unknown }).content === "string";
}

export function render(text: string, vars: Record<string, string>): string {
  return text.replace(TEMPLATE_PATTERN, (whole, name: string) => vars[name] ?? whole);
}

export function renderDeep(value: unknown, vars: Record<string, string>): unknown {
  if (typeof value === "string") return render(value, vars);
  if (Array.isArray(value)) return value.map((v) => renderDeep(v, vars));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderDeep(v, vars)]));
  }
  return value;
}

/** A few deltas at word boundaries, so consumers see text arrive in pieces. */
export function splitText(text: string): string[] {
  const words = text.match(/\s*\S+\s*|\s+/g) ?? [text];
  const size = Math.max(1, Math.ceil(words.length / 3));
  const deltas: string[] = [];
  for (let i = 0; i < words.length; i += size) deltas.push(words.slice(i, i + size).join(""));
  return deltas;
}

export function usageOf(inputChars: number, outputChars: number, set: ScriptUsage | undefined): LanguageModelV3Usage {
  const input = set?.input ?? Math.ceil(inputChars / 4);
  const output = set?.output ?? Math.ceil(outputChars / 4);
  const cacheRead = set?.cached_input ?? 0;
  return {
    inputTokens: { total: input, noCache: Math.max(0, input - cacheRead), cacheRead, cacheWrite: 0 },
    outputTokens: { total: output, text: output, reasoning: 0 },
  };
}

export function scriptedError(error: ScriptError, modelId: string): APICallError {
  const message = error.message ?? `Scripted error (HTTP ${error.status})`;
  return new APICallError({
    message,
    url: `script://${modelId}`,
    requestBodyValues: {},
    statusCode: error.status,
    responseHeaders: error.retry_after === undefined ? undefined : { "retry-after": String(error.retry_after) },
    responseBody: JSON.stringify({ error: { message } }),
    isRetryable: error.status === 429 || error.status >= 500,
  });
}

export function abortError(signal: AbortSignal): Error {
  const error = new Error("The scripted model call was aborted", { cause: signal.reason });
  error.name = "AbortError";
  return error;
}

export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Settles only by rejecting when `signal` aborts; without a signal, never. */
export function waitForAbort(signal: AbortSignal | undefined): Promise<never> {
  return new Promise((_resolve, reject) => {
    if (signal === undefined) return;
    if (signal.aborted) reject(abortError(signal));
    else signal.addEventListener("abort", () => reject(abortError(signal)), { once: true });
  });
}

// Same mapping as the daemon's tool registry (first "/" <-> "__"); kept here so
// the testing package does not depend on the daemon.
export function toModelToolName(name: string): string {
  const slash = name.indexOf("/");
  return slash < 0 ? name : `${name.slice(0, slash)}__${name.slice(slash + 1)}`;
}

export function fromModelToolName(name: string): string {
  const sep = name.indexOf("__");
  return sep < 0 ? name : `${name.slice(0, sep)}/${name.slice(sep + 2)}`;
}

/** Scripts that ship with Wardrik: `script/echo` and `script/demo` (used by `wardrik init`). */
