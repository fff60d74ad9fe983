/** The shapes of a script for the scripted model, as tests and script files write them. */
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3Prompt,
  LanguageModelV3StreamResult,
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

export interface StepModifiers {
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
