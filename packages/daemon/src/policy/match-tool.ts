/**
 * Compiles a policy rule's tool pattern once into a test that does no parsing
 * and builds no regex. Tools are named `namespace/tool`.
 *
 * - `*` matches any run of characters, `/` included, so `*` matches every tool.
 * - `linear/*` matches the tools of namespace `linear`; `workers/find_*` a prefix.
 * - A name without `/` or `*`, like `files`, means the whole namespace: `files/*`.
 * - Anything else is an exact name: `workers/find_order`.
 */
export function compileToolPattern(pattern: string): (tool: string) => boolean {
  const expanded = pattern.includes("/") || pattern.includes("*") ? pattern : `${pattern}/*`;
  return compileGlob(expanded.split("*"));
}

/** `parts` is the pattern split on `*`: one part means no wildcard. */
function compileGlob(parts: readonly string[]): (tool: string) => boolean {
  const first = parts[0] ?? "";
  if (parts.length === 1) return (tool) => tool === first;
  const last = parts[parts.length - 1] ?? "";
  const middle = parts.slice(1, -1).filter((part) => part !== "");
  const minLength = parts.reduce((sum, part) => sum + part.length, 0);

  if (middle.length === 0) {
    if (first === "" && last === "") return () => true;
    if (last === "") return (tool) => tool.startsWith(first);
    if (first === "") return (tool) => tool.endsWith(last);
    return (tool) => tool.length >= minLength && tool.startsWith(first) && tool.endsWith(last);
  }

  // Greedy left-to-right search is exact for `*`-only globs: taking the
  // earliest occurrence of each middle part never rules out a later match.
  return (tool) => {
    if (tool.length < minLength || !tool.startsWith(first) || !tool.endsWith(last)) return false;
    let from = first.length;
    const end = tool.length - last.length;
    for (const part of middle) {
      const at = tool.indexOf(part, from);
      if (at < 0 || at + part.length > end) return false;
      from = at + part.length;
    }
    return true;
  };
}
