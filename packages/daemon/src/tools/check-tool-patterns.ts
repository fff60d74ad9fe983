import type { ToolPatternProblem } from "@wardrik/protocol";
import { didYouMean } from "../config/did-you-mean.js";
import { compileToolPattern } from "../policy/match-tool.js";
import type { ToolRegistry } from "./tool-registry.js";

/** Namespaces whose tools are fixed, so a pattern can be checked against them without starting anything. */
const FIXED_NAMESPACES = new Set(["files"]);

/** The namespace part of a pattern (`workers/find_*` -> `workers`, `files` -> `files`), or undefined when it has a wildcard. */
export function patternNamespace(pattern: string): string | undefined {
  const slash = pattern.indexOf("/");
  const ns = slash < 0 ? pattern : pattern.slice(0, slash);
  return ns.includes("*") ? undefined : ns;
}

/**
 * Tool patterns of an agent of `org` that can match nothing: an unknown namespace
 * (`workres/*`, `file`), or a name the built-in `files` namespace does not
 * have. Namespaces whose tools come and go (workers, MCP servers) are not
 * checked tool by tool: a worker may simply not be connected yet.
 */
export function toolPatternProblems(patterns: readonly string[], registry: ToolRegistry, org: string): ToolPatternProblem[] {
  // Only what the agent's org may use: another org's namespaces are neither offered nor named.
  const namespaces = registry.namespaces(org);
  const problems: ToolPatternProblem[] = [];
  for (const pattern of patterns) {
    const ns = patternNamespace(pattern);
    if (ns === undefined) continue;
    if (!namespaces.includes(ns)) {
      problems.push({
        pattern,
        reason: `no tool namespace "${ns}"${didYouMean(ns, namespaces)}; the namespaces are ${namespaces.join(", ")}`,
      });
      continue;
    }
    const fixed = FIXED_NAMESPACES.has(ns) ? fixedTools(registry, ns) : undefined;
    if (fixed && !fixed.some(compileToolPattern(pattern))) {
      problems.push({ pattern, reason: `no ${ns} tool matches; ${ns} has ${fixed.join(", ")}` });
    }
  }
  return problems;
}

function fixedTools(registry: ToolRegistry, ns: string): string[] | undefined {
  // A fixed namespace lists the same tools for everyone, synchronously.
  const list = registry.get(ns)?.list({ org: "", agentId: "" });
  return Array.isArray(list) ? list.map((t) => t.name) : undefined;
}
