import type { ToolOutcome } from "./toolset.js";

/**
 * Tool outputs known to be plain JSON within the depth limit: a worker's
 * result, parsed from its frame by parseJsonWithin (which refused anything
 * deeper), and redacted copies of such outputs. The runtime measures and
 * copies any other output (an MCP server's, a toolset's own objects) through
 * JSON before storing it; a plain one it takes as it is, sparing a large
 * result two more walks (JSON.stringify, then JSON.parse) and their garbage.
 *
 * The outcome says so (it is a PlainJsonOutcome), not the output: outputs
 * are the tool's data and are stored and sent as they are, and a WeakSet of
 * outputs cost about a microsecond a call and weak entries for every
 * collection to trace. An outcome rebuilt as a literal is only measured again.
 */
class PlainJsonOutcome {
  readonly ok = true;
  constructor(readonly output: unknown) {}
}

/** A successful outcome whose output is plain JSON within the depth limit. */
export function plainJsonOutcome(output: unknown): ToolOutcome {
  return new PlainJsonOutcome(output);
}

/** Whether `outcome` carries an output known to be plain JSON. */
export function isPlainJsonOutcome(outcome: ToolOutcome): boolean {
  return outcome instanceof PlainJsonOutcome;
}
