/**
 * The scripted model: a real `LanguageModelV3` that plays a script of replies,
 * tool calls and failures instead of calling a provider. It records every call
 * so tests can read what the model was sent.
 */
import {
  abortError,
  readPrompt,
  render,
  renderDeep,
  resultText,
  scriptedError,
  sleep,
  splitText,
  toModelToolName,
  usageOf,
  waitForAbort,
  type PromptView,
} from "./prompt-view.js";
import type {
  Script,
  ScriptDefinition,
  ScriptedModel,
  ScriptedModelOptions,
  ScriptError,
  ScriptFunction,
  ScriptStep,
  ScriptToolCall,
  StepModifiers,
} from "./script-types.js";
import { compileMatch } from "./script-types.js";

import type {
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3Usage,
} from "@ai-sdk/provider";

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
