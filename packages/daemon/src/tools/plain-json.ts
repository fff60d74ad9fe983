/**
 * Tool outputs known to be plain JSON within the depth limit: a worker's
 * result, parsed from its frame by parseJsonWithin (which refused anything
 * deeper), and redacted copies of such outputs. The runtime measures and
 * copies any other output (an MCP server's, a toolset's own objects) through
 * JSON before storing it; a marked one it takes as it is, sparing a large
 * result two more walks (JSON.stringify, then JSON.parse) and their garbage.
 *
 * A WeakSet, not a property: outputs are the tool's data and are stored and
 * sent as they are.
 */
const plain = new WeakSet<object>();

/** Marks `value` (an object or array fresh from JSON.parse within the depth limit) as plain JSON; returns it. */
export function markPlainJson<T>(value: T): T {
  if (typeof value === "object" && value !== null) plain.add(value);
  return value;
}

/** Whether `value` was marked: only objects and arrays can be; anything else is measured as before. */
export function isPlainJson(value: unknown): boolean {
  return typeof value === "object" && value !== null && plain.has(value);
}
