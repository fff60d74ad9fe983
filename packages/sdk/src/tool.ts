import { z } from "zod";
import { isValidName, type WorkerToolDescriptor } from "@wardrik/protocol";

/** What `run` receives besides its arguments. */
export interface ToolContext {
  /** The calling agent's ID. Wardrik sets it, never the model: use it to scope data. */
  readonly agent: string;
  /** The turn's ID, the same as in its events. */
  readonly run: string;
  /** The same on every attempt of this call: pass it to APIs that take one. */
  readonly idempotencyKey: string;
  /** Aborts when the call is killed, its turn is cancelled, or it times out. Pass it to fetch. */
  readonly signal: AbortSignal;
  /** Adds a paid API's cost, in US dollars, to the agent's budget. Calls add up. */
  cost(usd: number): void;
  /**
   * The W3C `traceparent` of the daemon's span for this call, when the daemon
   * exports traces. With `@opentelemetry/api` installed and set up in this
   * process, spans `run` starts are already children of it; pass it on
   * yourself to whatever else should join the trace.
   */
  readonly traceparent?: string | undefined;
}

/** The input of a tool: a zod object schema. */
export type ToolInput = z.core.$ZodObject;

/**
 * The argument of `wardrik.tool()` and `defineTool()`: exactly the keys of the
 * "Write tools" page. `Output` is what `run` returns, kept so a test of the
 * tool sees its real type.
 */
export interface ToolDefinition<Input extends ToolInput = ToolInput, Output = unknown> {
  /** 1 to 55 letters, digits, `_` and `-`. The model sees `workers__NAME`; policies name it `workers/NAME`. */
  name: string;
  /** Sent to the model: say what the tool does and when to use it. Without one, the model gets the title, else the name. */
  description?: string;
  /** A display name. */
  title?: string;
  /** A zod object schema for the arguments; `.describe()` documents a field for the model. */
  input: Input;
  /** Read-only: no approval needed by default (explicit policy rules still apply), safe to retry. */
  readOnly?: boolean;
  /** Safe to retry with the same idempotency key without repeating its effects. */
  idempotent?: boolean;
  /** Return an object or a string; throw to fail the call (the message reaches the model). */
  run: (args: z.output<Input>, ctx: ToolContext) => Output;
}

/**
 * A tool as a value, for a module of its own and its unit tests; register it
 * with `wardrik.tool(tool)`. Only types: the definition is returned as is.
 */
export function defineTool<Input extends ToolInput, Output>(definition: ToolDefinition<Input, Output>): ToolDefinition<Input, Output> {
  return definition;
}

/** A definition that passed the checks, with what the daemon needs to list it. */
export interface CheckedTool {
  descriptor: WorkerToolDescriptor;
  input: ToolInput;
  run: (args: unknown, ctx: ToolContext) => unknown;
}

export type CheckResult = { ok: true; tool: CheckedTool } | { ok: false; name: string; reason: string };

/** Validates a definition at runtime (JavaScript callers and casts get past the types). */
export function checkTool(def: unknown): CheckResult {
  if (!isRecord(def)) return { ok: false, name: String(def), reason: "tool() takes a definition object" };
  const name = typeof def.name === "string" ? def.name : String(def.name);
  const fail = (reason: string): CheckResult => ({ ok: false, name, reason });
  if (typeof def.name !== "string" || !isValidName(def.name)) return fail("invalid name: a tool name is 1 to 55 letters, digits, _ or -");
  if (!isZodObject(def.input)) return fail(`input is not a zod object schema (z.object({...})); got ${describeValue(def.input)}`);
  if (def.description !== undefined && typeof def.description !== "string") return fail("description must be a string");
  if (typeof def.run !== "function") return fail("run must be a function");
  if (def.title !== undefined && typeof def.title !== "string") return fail("title must be a string");
  let inputSchema: Record<string, unknown>;
  try {
    inputSchema = z.toJSONSchema(def.input, { io: "input" }) as Record<string, unknown>;
  } catch (err) {
    return fail(`its input cannot be expressed as JSON Schema for the model: ${errorMessage(err)}`);
  }
  // The dialect marker costs the model tokens and tells it nothing.
  delete inputSchema.$schema;
  const descriptor: WorkerToolDescriptor = {
    name: def.name,
    // The seed's own examples omit it; the model still needs a line about the tool.
    description: nonEmpty(def.description) ?? nonEmpty(def.title) ?? def.name,
    inputSchema,
    readOnly: def.readOnly === true,
    idempotent: def.idempotent === true,
  };
  if (typeof def.title === "string") descriptor.title = def.title;
  return { ok: true, tool: { descriptor, input: def.input, run: def.run as CheckedTool["run"] } };
}

function nonEmpty(text: unknown): string | undefined {
  return typeof text === "string" && text.trim() !== "" ? text : undefined;
}

function isZodObject(value: unknown): value is ToolInput {
  if (!isRecord(value) || !isRecord(value._zod)) return false;
  const def = value._zod.def;
  return isRecord(def) && def.type === "object";
}

function describeValue(value: unknown): string {
  if (isRecord(value) && isRecord(value._zod) && isRecord(value._zod.def)) return `a zod ${String(value._zod.def.type)} schema`;
  if (isRecord(value) && "_def" in value) return "a zod 3 schema (use zod 4)";
  return value === null ? "null" : typeof value;
}

export type ParsedArgs = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * Parses the model's arguments; a failure is worded for the model to correct
 * its request. Synchronous unless the schema has async refinements, so a
 * simple call does not pay for promises.
 */
export function parseArgs(toolName: string, input: ToolInput, args: unknown): ParsedArgs | Promise<ParsedArgs> {
  let result: z.ZodSafeParseResult<unknown>;
  try {
    result = z.safeParse(input, args);
  } catch (err) {
    if (!(err instanceof z.core.$ZodAsyncError)) throw err;
    return z.safeParseAsync(input, args).then((r) => toParsed(toolName, r));
  }
  return toParsed(toolName, result);
}

function toParsed(toolName: string, result: z.ZodSafeParseResult<unknown>): ParsedArgs {
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, error: `Invalid arguments for ${toolName}: ${formatIssues(result.error.issues)}` };
}

/** `items[0].sku: Invalid input: expected string, received number; ...` */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const path = formatPath(issue.path);
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join("; ");
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else out += (out ? "." : "") + String(seg);
  }
  return out;
}

/**
 * The JSON text of a result, or why it has none. A plain JSON.stringify drops
 * functions, Maps and Sets without a word; those are errors here so the
 * author hears about it instead of the model getting `{}`.
 */
export function serializeResult(value: unknown): { ok: true; json: string } | { ok: false; error: string } {
  if (value === undefined) return { ok: true, json: "null" };
  let json: string | undefined;
  try {
    json = JSON.stringify(value, refuseWhatJsonDrops);
  } catch (err) {
    const why = errorMessage(err).replace(/\s*\n\s*/g, " ");
    return {
      ok: false,
      error: `The tool's result cannot be sent as JSON: ${why}. Return plain data: objects, arrays, strings, numbers, booleans.`,
    };
  }
  return json === undefined ? { ok: false, error: "The tool's result cannot be sent as JSON." } : { ok: true, json };
}

/** JSON.stringify's replacer for a result: throws on what it would drop or mangle without a word. Runs for every key; allocates nothing unless it throws. */
function refuseWhatJsonDrops(this: unknown, key: string, v: unknown): unknown {
  switch (typeof v) {
    case "bigint":
      throw new TypeError(`a BigInt${where(key)} (convert it to a string or number)`);
    case "function":
      throw new TypeError(`a function${where(key)}`);
    case "symbol":
      throw new TypeError(`a symbol${where(key)}`);
    case "object":
      if (v instanceof Map || v instanceof Set) {
        throw new TypeError(`a ${v instanceof Map ? "Map" : "Set"}${where(key)} (convert it to an object or array)`);
      }
  }
  return v;
}

function where(key: string): string {
  return key === "" ? "" : ` at "${key}"`;
}

/** The message of a thrown value, as the model will read it. */
export function thrownMessage(err: unknown): string {
  if (err instanceof Error) return err.message || `${err.name} (without a message)`;
  if (typeof err === "string") return err;
  try {
    return JSON.stringify(err) ?? String(err);
  } catch {
    return String(err);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
