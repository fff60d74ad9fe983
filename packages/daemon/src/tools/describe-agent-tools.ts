import type { AgentTools } from "@wardrik/protocol";
import { compileToolPattern } from "../policy/match-tool.js";
import { patternNamespace, toolPatternProblems } from "./check-tool-patterns.js";
import type { ToolRegistry } from "./tool-registry.js";
import type { ToolScope } from "./toolset.js";

const SOURCES: Record<string, "builtin" | "worker"> = { files: "builtin", person: "builtin", agents: "builtin", workers: "worker" };

/**
 * What an agent can call right now, under the names policies use and the
 * names the model sees, and why a pattern of its file matches nothing.
 * Listing an MCP namespace starts its server, as the agent's next turn would.
 */
export async function describeAgentTools(patterns: readonly string[], registry: ToolRegistry, scope: ToolScope): Promise<AgentTools> {
  const resolved = [...(await registry.resolve(patterns, scope)).values()].sort((a, b) => a.name.localeCompare(b.name));
  const tools = resolved.map((t) => {
    const servers = t.toolset.servers?.(scope, t.local);
    return {
      name: t.name,
      model_name: t.modelName,
      source: SOURCES[t.toolset.namespace] ?? ("mcp" as const),
      namespace: t.toolset.namespace,
      ...(t.title !== undefined ? { title: t.title } : {}),
      description: t.description,
      read_only: t.readOnly,
      idempotent: t.idempotent,
      input_schema: t.inputSchema,
      ...(servers ? { served_by: servers } : {}),
    };
  });

  const problems = new Map(toolPatternProblems(patterns, registry, scope.org).map((p) => [p.pattern, p.reason]));
  const unmatched: AgentTools["unmatched"] = [];
  for (const pattern of patterns) {
    const matches = compileToolPattern(pattern);
    if (resolved.some((t) => matches(t.name))) continue;
    const known = problems.get(pattern);
    if (known) {
      unmatched.push({ pattern, reason: known, expected: false });
      continue;
    }
    const ns = patternNamespace(pattern);
    const toolset = ns === undefined ? undefined : registry.get(ns);
    if (ns === "workers") {
      unmatched.push({
        pattern,
        reason: "no connected worker serves a matching tool yet; calls wait for workers to connect",
        expected: true,
      });
    } else if (toolset) {
      const down = (toolset.status?.(scope) ?? []).find((s) => s.status === "down");
      unmatched.push({
        pattern,
        reason: down ? `MCP server "${ns}" is down: ${down.reason ?? "no reason given"}` : `no tool of "${ns}" matches`,
        expected: false,
      });
    } else {
      unmatched.push({ pattern, reason: "no tool matches", expected: false });
    }
  }

  const skipped: AgentTools["skipped"] = [];
  for (const ns of registry.namespaces(scope.org)) {
    const toolset = registry.get(ns);
    if (!toolset?.skipped || !patterns.some((p) => patternNamespace(p) === undefined || patternNamespace(p) === ns)) continue;
    for (const s of toolset.skipped(scope)) skipped.push({ namespace: ns, tool: s.tool, reason: s.reason });
  }
  return { patterns: [...patterns], tools, unmatched, skipped };
}
