/** Script files: YAML with the `ScriptDefinition` shape, validated with errors that name file, line and key. */
import { readFileSync } from "node:fs";
import { LineCounter, isMap, parseDocument } from "yaml";
import type { Document } from "yaml";
import { TEMPLATE_NAMES, TEMPLATE_PATTERN, compileMatch } from "./script-types.js";
import type { ScriptDefinition, ScriptError, ScriptScenario, ScriptStep, ScriptToolCall, ScriptUsage } from "./script-types.js";

const MARKER = Symbol.for("wardrik.script_file_error");

export class ScriptFileError extends Error {
  readonly [MARKER] = true;
  readonly file: string;
  /** Dotted path of the offending key, e.g. `steps[1].tool_calls[0].tool`; empty for the whole file. */
  readonly key: string;
  readonly line: number | undefined;

  constructor(file: string, key: string, line: number | undefined, problem: string) {
    super(`${file}${line === undefined ? "" : `:${line}`}: ${key === "" ? "" : `${key}: `}${problem}`);
    this.name = "ScriptFileError";
    this.file = file;
    this.key = key;
    this.line = line;
  }

  static isInstance(value: unknown): value is ScriptFileError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[MARKER] === true;
  }
}

/** Reads and validates a script file. Synchronous: model resolution is. */
export function loadScriptFile(path: string): ScriptDefinition {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new ScriptFileError(path, "", undefined, `cannot read the script file: ${(err as Error).message}`);
  }
  return parseScript(text, path);
}

export function parseScript(text: string, file = "<script>"): ScriptDefinition {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const syntax = doc.errors[0];
  if (syntax !== undefined) {
    throw new ScriptFileError(file, "", lineCounter.linePos(syntax.pos[0]).line, `invalid YAML: ${syntax.message.split("\n")[0]}`);
  }
  return new ScriptValidator(file, doc, lineCounter).script(doc.toJS() as unknown);
}

type Path = (string | number)[];
type Plain = Record<string, unknown>;

const ROOT_KEYS = ["description", "steps", "scenarios", "delay_ms"];
const SCENARIO_KEYS = ["match", "steps"];
const STEP_KEYS = ["text", "tool_calls", "error", "hang", "delay_ms", "usage"];
const TOOL_CALL_KEYS = ["tool", "args"];
const ERROR_KEYS = ["status", "message", "retry_after"];
const USAGE_KEYS = ["input", "output", "cached_input"];

class ScriptValidator {
  constructor(
    private readonly file: string,
    private readonly doc: Document,
    private readonly lines: LineCounter,
  ) {}

  script(value: unknown): ScriptDefinition {
    if (value === null || value === undefined) this.fail([], "the script is empty: give it steps or scenarios");
    const root = this.map(value, [], ROOT_KEYS);
    const out: ScriptDefinition = {};
    if (root.description !== undefined) out.description = this.string(root.description, ["description"]);
    if (root.steps !== undefined) out.steps = this.steps(root.steps, ["steps"]);
    if (root.scenarios !== undefined) {
      out.scenarios = this.list(root.scenarios, ["scenarios"]).map((s, i) => this.scenario(s, ["scenarios", i]));
    }
    if (root.delay_ms !== undefined) out.delay_ms = this.number(root.delay_ms, ["delay_ms"]);
    if (out.steps === undefined && out.scenarios === undefined) this.fail([], "the script needs steps or scenarios");
    return out;
  }

  private scenario(value: unknown, path: Path): ScriptScenario {
    const raw = this.map(value, path, SCENARIO_KEYS);
    if (raw.steps === undefined) this.fail(path, "a scenario needs steps");
    const out: ScriptScenario = { steps: this.steps(raw.steps, [...path, "steps"]) };
    if (raw.match !== undefined) {
      const match = this.string(raw.match, [...path, "match"]);
      try {
        compileMatch(match);
      } catch (err) {
        this.fail([...path, "match"], `not a valid regular expression: ${(err as Error).message}`);
      }
      out.match = match;
    }
    return out;
  }

  private steps(value: unknown, path: Path): ScriptStep[] {
    return this.list(value, path).map((s, i) => this.step(s, [...path, i]));
  }

  private step(value: unknown, path: Path): ScriptStep {
    const raw = this.map(value, path, STEP_KEYS);
    const kinds = ["text", "tool_calls", "error", "hang"].filter((k) => raw[k] !== undefined);
    const replies = kinds.filter((k) => k === "text" || k === "tool_calls").length > 0 ? 1 : 0;
    const others = kinds.filter((k) => k === "error" || k === "hang").length;
    if (replies + others !== 1) {
      this.fail(
        path,
        `a step has exactly one of text (with or without tool_calls), error or hang; found ${kinds.length === 0 ? "none" : kinds.join(", ")}`,
      );
    }
    const modifiers: { delay_ms?: number; usage?: ScriptUsage } = {};
    if (raw.delay_ms !== undefined) modifiers.delay_ms = this.number(raw.delay_ms, [...path, "delay_ms"]);
    if (raw.usage !== undefined) modifiers.usage = this.usage(raw.usage, [...path, "usage"]);

    if (raw.hang !== undefined) {
      if (raw.hang !== true) this.fail([...path, "hang"], "must be true");
      return { ...modifiers, hang: true };
    }
    if (raw.error !== undefined) return { ...modifiers, error: this.error(raw.error, [...path, "error"]) };
    const text = raw.text === undefined ? undefined : this.template(this.string(raw.text, [...path, "text"]), [...path, "text"]);
    if (raw.tool_calls === undefined) return { ...modifiers, text: text ?? "" };
    const calls = this.list(raw.tool_calls, [...path, "tool_calls"]).map((c, i) => this.toolCall(c, [...path, "tool_calls", i]));
    return text === undefined ? { ...modifiers, tool_calls: calls } : { ...modifiers, tool_calls: calls, text };
  }

  private toolCall(value: unknown, path: Path): ScriptToolCall {
    const raw = this.map(value, path, TOOL_CALL_KEYS);
    if (raw.tool === undefined) this.fail(path, "a tool call needs tool (e.g. files/write)");
    const tool = this.string(raw.tool, [...path, "tool"]);
    if (tool === "") this.fail([...path, "tool"], "must not be empty");
    if (raw.args === undefined) return { tool, args: {} };
    const args = this.map(raw.args, [...path, "args"]);
    this.templatesIn(args, [...path, "args"]);
    return { tool, args };
  }

  private error(value: unknown, path: Path): ScriptError {
    const raw = this.map(value, path, ERROR_KEYS);
    if (raw.status === undefined) this.fail(path, "an error needs status (an HTTP status such as 429 or 500)");
    const status = this.number(raw.status, [...path, "status"]);
    if (!Number.isInteger(status) || status < 400 || status > 599) this.fail([...path, "status"], "must be an HTTP error status (400-599)");
    const out: ScriptError = { status };
    if (raw.message !== undefined) out.message = this.string(raw.message, [...path, "message"]);
    if (raw.retry_after !== undefined) out.retry_after = this.number(raw.retry_after, [...path, "retry_after"]);
    return out;
  }

  private usage(value: unknown, path: Path): ScriptUsage {
    const raw = this.map(value, path, USAGE_KEYS);
    const out: ScriptUsage = {};
    for (const key of USAGE_KEYS as (keyof ScriptUsage)[]) {
      if (raw[key] === undefined) continue;
      const n = this.number(raw[key], [...path, key]);
      if (!Number.isInteger(n)) this.fail([...path, key], "must be a whole number of tokens");
      out[key] = n;
    }
    return out;
  }

  private templatesIn(value: unknown, path: Path): void {
    if (typeof value === "string") this.template(value, path);
    else if (Array.isArray(value)) value.forEach((v, i) => this.templatesIn(v, [...path, i]));
    else if (typeof value === "object" && value !== null) {
      for (const [k, v] of Object.entries(value)) this.templatesIn(v, [...path, k]);
    }
  }

  private template(text: string, path: Path): string {
    for (const m of text.matchAll(TEMPLATE_PATTERN)) {
      if (!(TEMPLATE_NAMES as readonly string[]).includes(m[1]!)) {
        this.fail(path, `unknown template {{${m[1]}}}; use ${TEMPLATE_NAMES.map((n) => `{{${n}}}`).join(", ")}`);
      }
    }
    return text;
  }

  private map(value: unknown, path: Path, allowed?: string[]): Plain {
    if (typeof value !== "object" || value === null || Array.isArray(value)) this.fail(path, "must be a mapping");
    const map = value as Plain;
    if (allowed !== undefined) {
      for (const key of Object.keys(map)) {
        if (!allowed.includes(key)) this.fail([...path, key], `unknown key; expected one of ${allowed.join(", ")}`);
      }
    }
    return map;
  }

  private list(value: unknown, path: Path): unknown[] {
    if (!Array.isArray(value)) this.fail(path, "must be a list");
    if (value.length === 0) this.fail(path, "must not be empty");
    return value;
  }

  private string(value: unknown, path: Path): string {
    if (typeof value !== "string") this.fail(path, "must be a string");
    return value;
  }

  private number(value: unknown, path: Path): number {
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) this.fail(path, "must be a number >= 0");
    return value;
  }

  private fail(path: Path, problem: string): never {
    throw new ScriptFileError(this.file, formatPath(path), this.lineOf(path), problem);
  }

  private lineOf(path: Path): number | undefined {
    // For a key, point at the key itself; otherwise at the value.
    const parent = path.length === 0 ? this.doc.contents : this.doc.getIn(path.slice(0, -1), true);
    const last = path.at(-1);
    let range: [number, number, number] | null | undefined;
    if (isMap(parent) && typeof last === "string") {
      const pair = parent.items.find((p) => (p.key as { value?: unknown } | null)?.value === last);
      range = (pair?.key as { range?: [number, number, number] } | null)?.range;
    }
    if (range == null) {
      const node = path.length === 0 ? this.doc.contents : this.doc.getIn(path, true);
      range = (node as { range?: [number, number, number] } | null | undefined)?.range;
    }
    return range == null ? undefined : this.lines.linePos(range[0]).line;
  }
}

function formatPath(path: Path): string {
  let out = "";
  for (const part of path) out += typeof part === "number" ? `[${part}]` : out === "" ? part : `.${part}`;
  return out;
}
