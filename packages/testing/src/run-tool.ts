/**
 * Unit tests for worker tools without a daemon, in the spirit of Temporal's
 * MockActivityEnvironment: a context that records what the tool reported,
 * and a run that validates arguments and results as a worker does.
 */
import { invokeTool, type ToolContext, type ToolDefinition, type ToolInput } from "@wardrik/sdk";
import type { z } from "zod";

/** Why a test stops a call, as the daemon would: a person's kill, a cancelled turn, or the timeout. */
export type TestAbortReason = "killed" | "cancelled" | "timeout";

/** A tool context for tests: the one a worker passes, plus what the tool did with it. */
export interface TestToolContext extends ToolContext {
  /** Every `cost(usd)` the tool made, in order. */
  readonly costs: number[];
  /** Their sum, in US dollars. */
  readonly totalCost: number;
  /** Aborts `signal` with the reason a worker would give (an AbortError, or a TimeoutError). */
  abort(reason?: TestAbortReason): void;
}

export interface TestToolContextOptions {
  /** The calling agent's ID. Default `agt_test`. */
  agent?: string;
  /** The turn's ID. Default `run_test`. */
  run?: string;
  /** Default `key_test`: give each test its own when the tool remembers keys. */
  idempotencyKey?: string;
  /** Aborts the call with a timeout after this many milliseconds, as the daemon's call timeout would. */
  timeoutMs?: number;
}

/** A context whose `cost` calls are recorded and whose signal the test controls. */
export function createToolContext(options: TestToolContextOptions = {}): TestToolContext {
  const controller = new AbortController();
  const costs: number[] = [];
  const abort = (reason: TestAbortReason = "killed"): void => {
    if (!controller.signal.aborted) controller.abort(abortError(reason));
  };
  if (options.timeoutMs !== undefined) {
    const timer = setTimeout(() => abort("timeout"), options.timeoutMs);
    // A test that finishes first must not be held open by the timer.
    timer.unref();
    controller.signal.addEventListener("abort", () => clearTimeout(timer), { once: true });
  }
  return {
    agent: options.agent ?? "agt_test",
    run: options.run ?? "run_test",
    idempotencyKey: options.idempotencyKey ?? "key_test",
    signal: controller.signal,
    costs,
    get totalCost() {
      return costs.reduce((sum, usd) => sum + usd, 0);
    },
    cost(usd: number) {
      if (typeof usd !== "number" || !Number.isFinite(usd) || usd < 0) {
        throw new TypeError(`cost(usd) takes a non-negative number of US dollars; got ${String(usd)}.`);
      }
      costs.push(usd);
    },
    abort,
  };
}

/** A failed tool call; `message` is what the model would read. */
export class ToolCallError extends Error {
  override readonly name = "ToolCallError";
  readonly tool: string;

  constructor(tool: string, message: string) {
    super(message);
    this.tool = tool;
  }

  static isInstance(value: unknown): value is ToolCallError {
    return value instanceof Error && value.name === "ToolCallError" && typeof (value as { tool?: unknown }).tool === "string";
  }
}

/**
 * Runs one call of `tool` as a worker would: `args` are validated against the
 * tool's input (so defaults and transforms apply, and bad arguments fail with
 * the message the model would get), and the result must be sendable as JSON.
 * Resolves with what `run` returned; rejects with a `ToolCallError` carrying
 * the model's error text. Pass a context from `createToolContext()` to read
 * its `costs` afterwards, or options for a fresh one.
 */
export async function runTool<Input extends ToolInput, Output>(
  tool: ToolDefinition<Input, Output>,
  args: z.input<Input>,
  ctx: TestToolContext | TestToolContextOptions = {},
): Promise<Awaited<Output>> {
  const context = isContext(ctx) ? ctx : createToolContext(ctx);
  const outcome = await invokeTool(tool, args, context);
  if (!outcome.ok) throw new ToolCallError(typeof tool.name === "string" ? tool.name : String(tool.name), outcome.error);
  return outcome.output;
}

function isContext(value: TestToolContext | TestToolContextOptions): value is TestToolContext {
  return typeof (value as Partial<TestToolContext>).cost === "function" && (value as Partial<TestToolContext>).signal !== undefined;
}

function abortError(reason: TestAbortReason): Error {
  const text = { killed: "The call was killed.", cancelled: "The call's turn was cancelled.", timeout: "The call timed out." }[reason];
  const err = new Error(text);
  err.name = reason === "timeout" ? "TimeoutError" : "AbortError";
  return err;
}
