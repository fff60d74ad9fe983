import { checkTool, parseArgs, serializeResult, thrownMessage, type ToolContext, type ToolDefinition, type ToolInput } from "./tool.js";

/** How one call of a tool ended: its value, or the error text the model would read. */
export type ToolOutcome<Output = unknown> = { ok: true; output: Output } | { ok: false; error: string };

/**
 * Runs one call of a tool the way a worker does, without a daemon: the
 * definition is checked, the arguments are validated against `input` (defaults
 * and transforms applied), `run` gets `ctx`, and the result must be sendable
 * as JSON. `@wardrik/testing`'s `runTool` is built on it.
 */
export async function invokeTool<Input extends ToolInput, Output>(
  tool: ToolDefinition<Input, Output>,
  args: unknown,
  ctx: ToolContext,
): Promise<ToolOutcome<Awaited<Output>>> {
  const checked = checkTool(tool);
  if (!checked.ok) return { ok: false, error: `The tool "${checked.name}" would be skipped: ${checked.reason}.` };
  const parsed = await parseArgs(checked.tool.descriptor.name, checked.tool.input, args);
  if (!parsed.ok) return parsed;
  let output: Awaited<Output>;
  try {
    output = (await checked.tool.run(parsed.value, ctx)) as Awaited<Output>;
  } catch (err) {
    return { ok: false, error: thrownMessage(err) };
  }
  const serialized = serializeResult(output);
  return serialized.ok ? { ok: true, output } : { ok: false, error: serialized.error };
}
