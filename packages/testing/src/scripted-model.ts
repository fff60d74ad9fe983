/**
 * The scripted model: a real `LanguageModelV3` that plays a script of replies,
 * tool calls and failures instead of calling a provider. It records every call
 * so tests can read what the model was sent.
 */
import { APICallError } from "@ai-sdk/provider";
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3GenerateResult,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3ToolResultOutput,
  LanguageModelV3Usage,
} from "@ai-sdk/provider";

/** Token counts a step reports instead of the estimate (chars / 4). */
export interface ScriptUsage {
  input?: number;
  output?: number;
  cached_input?: number;
}

/** A tool call as written in agent files: `files/write`, sent to the model as `files__write`. */
export interface ScriptToolCall {
  tool: string;
  args?: Record<string, unknown>;
}

/** A failed call: thrown as an `APICallError` with this HTTP status. */
export interface ScriptError {
  status: number;
  message?: string;
  /** Seconds, sent as the `retry-after` response header. */
  retry_after?: number;
}

interface StepModifiers {
  /** Wait this long before answering (abortable). */
  delay_ms?: number;
  usage?: ScriptUsage;
}

export type ScriptStep = StepModifiers &
  (
    | { text: string }
    | { tool_calls: ScriptToolCall[]; text?: string }
    | { error: ScriptError }
    /** Never answers; rejects with an AbortError once the call's signal aborts. */
    | { hang: true }
  );

export interface ScriptScenario {
  /** Regular expression (case-insensitive) tested against the turn's latest user message; none matches all. */
  match?: string;
  steps: ScriptStep[];
}

export interface ScriptDefinition {
  description?: string;
  /** Played when no scenario matches (or when there are none). */
  steps?: ScriptStep[];
  /** Tried in order; the first that matches plays. */
  scenarios?: ScriptScenario[];
  /** Default delay before every step. */
  delay_ms?: number;
}

export interface ScriptToolResult {
  /** `ns/tool`, as in agent files. */
  toolName: string;
  output: unknown;
}

export interface ScriptContext {
  prompt: LanguageModelV3Prompt;
  tools: NonNullable<LanguageModelV3CallOptions["tools"]>;
  /** Calls made to this model before this one, across turns. */
  callIndex: number;
  /** Assistant messages since the latest user message: 0 on a turn's first call. */
  stepIndex: number;
  lastUserMessage: string;
  /** Results of the latest round of tool calls (empty at the start of a turn). */
  lastToolResults: ScriptToolResult[];
}

export type ScriptFunction = (ctx: ScriptContext) => ScriptStep | Promise<ScriptStep>;

export type Script = ScriptDefinition | ScriptFunction;

export interface ScriptedModelOptions {
  /** Reported as `modelId`; `resolveModel` passes the script's name. */
  modelId?: string;
  /** How many recent calls `calls` keeps (default 1,000). */
  keepCalls?: number;
  /** Delay before every step that sets none; overrides the script's `delay_ms`. */
  delayMs?: number;
}

export interface ScriptedModel extends LanguageModelV3 {
  /** Every call's options, in order. */
  /** The most recent calls (up to `keepCalls`, default 1,000), oldest first. */
  readonly calls: LanguageModelV3CallOptions[];
  /** How many calls were made in all, including those no longer kept. */
  readonly callCount: number;
  doGenerate(options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult>;
  doStream(options: LanguageModelV3CallOptions): Promise<LanguageModelV3StreamResult>;
}

export const TEMPLATE_NAMES = ["message", "result", "call_count"] as const;
export const TEMPLATE_PATTERN = /\{\{\s*([A-Za-z_]+)\s*\}\}/g;

/** Scenario patterns are case-insensitive: script authors match words, not casing. */
export function compileMatch(pattern: string): RegExp {
  return new RegExp(pattern, "i");
}

export function createScriptedModel(script: Script, options: ScriptedModelOptions = {}): ScriptedModel {
  return new ScriptedLanguageModel(script, options);
}

interface CompiledScript {
  steps: ScriptStep[] | undefined;
  scenarios: { match: RegExp | undefined; steps: ScriptStep[] }[];
  delayMs: number | undefined;
}

interface Reply {
  text: string;
  toolCalls: { toolCallId: string; toolName: string; input: string }[];
  usage: LanguageModelV3Usage;
  finishReason: LanguageModelV3FinishReason;
}

/** Every key any step variant may carry, for reading a step without narrowing. */
interface StepFields extends StepModifiers {
  text?: string;
  tool_calls?: ScriptToolCall[];
  error?: ScriptError;
  hang?: boolean;
}

class ScriptedLanguageModel implements ScriptedModel {
  readonly specificationVersion = "v3" as const;
  readonly provider = "script";
  readonly modelId: string;
  readonly supportedUrls: Record<string, RegExp[]> = {};
  readonly calls: LanguageModelV3CallOptions[] = [];
  #count = 0;
  readonly #keep: number;

  get callCount(): number {
    return this.#count;
  }

  readonly #play: ScriptFunction | CompiledScript;
  readonly #delayMs: number | undefined;
  #toolCallCount = 0;

  constructor(script: Script, options: ScriptedModelOptions) {
    this.modelId = options.modelId ?? "script";
    this.#play = typeof script === "function" ? script : compileScript(script, this.modelId);
    this.#delayMs = options.delayMs;
    this.#keep = options.keepCalls ?? 1000;
  }

  async doGenerate(options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
    const reply = await this.#answer(options);
    const content: LanguageModelV3Content[] = [];
    if (reply.text !== "") content.push({ type: "text", text: reply.text });
    for (const call of reply.toolCalls) content.push({ type: "tool-call", ...call });
    return { content, finishReason: reply.finishReason, usage: reply.usage, warnings: [] };
  }

  async doStream(options: LanguageModelV3CallOptions): Promise<LanguageModelV3StreamResult> {
    const reply = await this.#answer(options);
    const textId = `text_script_${this.calls.length}`;
    const parts: LanguageModelV3StreamPart[] = [{ type: "stream-start", warnings: [] }];
    if (reply.text !== "") {
      parts.push({ type: "text-start", id: textId });
      for (const delta of splitText(reply.text)) parts.push({ type: "text-delta", id: textId, delta });
      parts.push({ type: "text-end", id: textId });
    }
    for (const call of reply.toolCalls) parts.push({ type: "tool-call", ...call });
    parts.push({ type: "finish", usage: reply.usage, finishReason: reply.finishReason });
    return {
      stream: new ReadableStream<LanguageModelV3StreamPart>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      }),
    };
  }

  async #answer(options: LanguageModelV3CallOptions): Promise<Reply> {
    const callIndex = this.#count;
    this.calls.push({ ...options });
    this.#count++;
    // A daemon running a script for weeks must not keep every prompt.
    if (this.calls.length > this.#keep) this.calls.splice(0, this.calls.length - this.#keep);
    const signal = options.abortSignal;
    if (signal?.aborted) throw abortError(signal);

    const view = readPrompt(options.prompt);
    const first = options.prompt[0];
    const compaction = first?.role === "system" && first.content.startsWith(COMPACTION_MARKER);
    const step: StepFields = compaction
      ? { text: summarise(view.lastUserMessage) }
      : typeof this.#play === "function"
        ? await this.#play({
            prompt: options.prompt,
            tools: options.tools ?? [],
            callIndex,
            stepIndex: view.stepIndex,
            lastUserMessage: view.lastUserMessage,
            lastToolResults: view.lastToolResults,
          })
        : selectStep(this.#play, view, this.modelId);

    const delayMs = step.delay_ms ?? this.#delayMs ?? (typeof this.#play === "function" ? undefined : this.#play.delayMs) ?? 0;
    if (delayMs > 0) await sleep(delayMs, signal);

    if (step.hang === true) return waitForAbort(signal);
    if (step.error !== undefined) throw scriptedError(step.error, this.modelId);
    if (step.text === undefined && step.tool_calls === undefined) {
      throw new Error(`Script "${this.modelId}": a step needs one of text, tool_calls, error or hang`);
    }

    const lastResult = view.lastToolResults.at(-1);
    const vars: Record<string, string> = {
      message: view.lastUserMessage,
      result: lastResult === undefined ? "" : resultText(lastResult.output),
      call_count: String(callIndex + 1),
    };
    const text = render(step.text ?? "", vars);
    const toolCalls = (step.tool_calls ?? []).map((call) => ({
      toolCallId: `call_script_${++this.#toolCallCount}`,
      toolName: toModelToolName(call.tool),
      input: JSON.stringify(renderDeep(call.args ?? {}, vars)),
    }));
    const outputChars = text.length + toolCalls.reduce((n, c) => n + c.toolName.length + c.input.length, 0);
    return {
      text,
      toolCalls,
      usage: usageOf(view.chars, outputChars, step.usage),
      finishReason: toolCalls.length > 0 ? { unified: "tool-calls", raw: "tool_calls" } : { unified: "stop", raw: "stop" },
    };
  }
}

function compileScript(script: ScriptDefinition, name: string): CompiledScript {
  const scenarios = (script.scenarios ?? []).map((scenario, i) => {
    if (scenario.steps.length === 0) throw new Error(`Script "${name}": scenarios[${i}] has no steps`);
    let match: RegExp | undefined;
    try {
      match = scenario.match === undefined ? undefined : compileMatch(scenario.match);
    } catch (err) {
      throw new Error(`Script "${name}": scenarios[${i}].match is not a valid regular expression: ${(err as Error).message}`);
    }
    return { match, steps: scenario.steps };
  });
  if ((script.steps?.length ?? 0) === 0 && scenarios.length === 0) throw new Error(`Script "${name}" has no steps`);
  return { steps: script.steps, scenarios, delayMs: script.delay_ms };
}

function selectStep(script: CompiledScript, view: PromptView, name: string): ScriptStep {
  const steps = script.scenarios.find((s) => s.match === undefined || s.match.test(view.lastUserMessage))?.steps ?? script.steps;
  if (steps === undefined || steps.length === 0) {
    throw new Error(`Script "${name}": no scenario matches ${JSON.stringify(view.lastUserMessage)} and the script has no default steps`);
  }
  // Past the end the last step repeats, so a turn that runs long keeps getting an answer.
  return steps[Math.min(view.stepIndex, steps.length - 1)]!;
}

interface PromptView {
  stepIndex: number;
  lastUserMessage: string;
  lastToolResults: ScriptToolResult[];
  chars: number;
}

function readPrompt(prompt: LanguageModelV3Prompt): PromptView {
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

function messageChars(message: LanguageModelV3Prompt[number]): number {
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

function outputValue(output: LanguageModelV3ToolResultOutput): unknown {
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
function resultText(output: unknown): string {
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

function hasStringContent(value: unknown): value is { content: string } {
  return typeof value === "object" && value !== null && typeof (value as { content?: unknown }).content === "string";
}

function render(text: string, vars: Record<string, string>): string {
  return text.replace(TEMPLATE_PATTERN, (whole, name: string) => vars[name] ?? whole);
}

function renderDeep(value: unknown, vars: Record<string, string>): unknown {
  if (typeof value === "string") return render(value, vars);
  if (Array.isArray(value)) return value.map((v) => renderDeep(v, vars));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderDeep(v, vars)]));
  }
  return value;
}

/** A few deltas at word boundaries, so consumers see text arrive in pieces. */
function splitText(text: string): string[] {
  const words = text.match(/\s*\S+\s*|\s+/g) ?? [text];
  const size = Math.max(1, Math.ceil(words.length / 3));
  const deltas: string[] = [];
  for (let i = 0; i < words.length; i += size) deltas.push(words.slice(i, i + size).join(""));
  return deltas;
}

function usageOf(inputChars: number, outputChars: number, set: ScriptUsage | undefined): LanguageModelV3Usage {
  const input = set?.input ?? Math.ceil(inputChars / 4);
  const output = set?.output ?? Math.ceil(outputChars / 4);
  const cacheRead = set?.cached_input ?? 0;
  return {
    inputTokens: { total: input, noCache: Math.max(0, input - cacheRead), cacheRead, cacheWrite: 0 },
    outputTokens: { total: output, text: output, reasoning: 0 },
  };
}

function scriptedError(error: ScriptError, modelId: string): APICallError {
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

function abortError(signal: AbortSignal): Error {
  const error = new Error("The scripted model call was aborted", { cause: signal.reason });
  error.name = "AbortError";
  return error;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
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
function waitForAbort(signal: AbortSignal | undefined): Promise<never> {
  return new Promise((_resolve, reject) => {
    if (signal === undefined) return;
    if (signal.aborted) reject(abortError(signal));
    else signal.addEventListener("abort", () => reject(abortError(signal)), { once: true });
  });
}

// Same mapping as the daemon's tool registry (first "/" <-> "__"); kept here so
// the testing package does not depend on the daemon.
function toModelToolName(name: string): string {
  const slash = name.indexOf("/");
  return slash < 0 ? name : `${name.slice(0, slash)}__${name.slice(slash + 1)}`;
}

function fromModelToolName(name: string): string {
  const sep = name.indexOf("__");
  return sep < 0 ? name : `${name.slice(0, sep)}/${name.slice(sep + 2)}`;
}

/** Scripts that ship with Wardrik: `script/echo` and `script/demo` (used by `wardrik init`). */
export const builtinScripts: Record<string, Script> = Object.freeze({
  echo: { steps: [{ text: "You said: {{message}}" }] },
  demo: {
    description: "Saves the question to a file, reads it back and quotes it.",
    steps: [
      { tool_calls: [{ tool: "files/write", args: { path: "notes/last-question.md", content: "{{message}}" } }] },
      { tool_calls: [{ tool: "files/read", args: { path: "notes/last-question.md" } }] },
      { text: 'I saved your question in notes/last-question.md. Reading it back: "{{result}}"' },
    ],
  },
});

/** Wardrik marks its compaction request with this; the scripted model answers it with a plain summary. */
export const COMPACTION_MARKER = "[wardrik:compaction]";

/** A deterministic stand-in for a model's summary: the gist of each line, shortened. */
function summarise(transcript: string): string {
  const lines = transcript.split("\n").filter((l) => l.trim() !== "");
  const gist = lines.map((l) => (l.length > 80 ? `${l.slice(0, 77)}...` : l)).slice(-20);
  return `Summary of ${lines.length} earlier lines:\n${gist.join("\n")}`;
}
