import { compileToolPattern } from "../policy/match-tool.js";
import type { SecretRedactor } from "../secrets/redactor.js";
import { redactingToolset } from "./redacting-toolset.js";
import type { ToolInfo, ToolScope, Toolset } from "./toolset.js";
import { toModelToolName } from "./toolset.js";

export interface ResolvedTool extends ToolInfo {
  modelName: string;
  toolset: Toolset;
  /** The name inside its toolset (without namespace). */
  local: string;
}

/** Maps namespaces to toolsets and resolves an agent's patterns to the tools it may use. */
export class ToolRegistry {
  private readonly toolsets = new Map<string, Toolset>();

  /** `redactor`: known secret values, blanked from every toolset's outcomes before the runtime sees them. */
  constructor(private readonly options: { redactor?: SecretRedactor } = {}) {}

  add(toolset: Toolset): void {
    if (this.toolsets.has(toolset.namespace)) throw new Error(`tool namespace "${toolset.namespace}" is already registered`);
    this.toolsets.set(toolset.namespace, this.options.redactor ? redactingToolset(toolset, this.options.redactor) : toolset);
  }

  get(namespace: string): Toolset | undefined {
    return this.toolsets.get(namespace);
  }

  /** Every namespace, or those agents of `org` may use. */
  namespaces(org?: string): string[] {
    return [...this.toolsets.values()].filter((t) => org === undefined || offered(t, org)).map((t) => t.namespace);
  }

  /** Tools matching the agent's patterns, keyed by the name the model sees. */
  async resolve(patterns: readonly string[], scope: ToolScope): Promise<Map<string, ResolvedTool>> {
    const out = new Map<string, ResolvedTool>();
    if (patterns.length === 0) return out;
    const matchers = patterns.map(compileToolPattern);
    for (const toolset of this.toolsets.values()) {
      if (!offered(toolset, scope.org)) continue;
      const prefix = toolset.namespace + "/";
      // Skip a toolset early when no pattern could match any of its tools.
      if (!patterns.some((p) => p === "*" || p === toolset.namespace || p.startsWith(prefix) || p.startsWith("*"))) continue;
      for (const info of await toolset.list(scope)) {
        if (!matchers.some((m) => m(info.name))) continue;
        const modelName = toModelToolName(info.name);
        out.set(modelName, { ...info, modelName, toolset, local: info.name.slice(prefix.length) });
      }
    }
    return out;
  }

  /** Tells every toolset that an agent no longer needs live resources (it sleeps or is removed). */
  async release(scope: ToolScope): Promise<void> {
    for (const t of this.toolsets.values()) await t.release?.(scope);
  }

  /** Like `find`, but gives a toolset that can wait (workers reconnecting) up to `timeoutMs` to offer the tool. */
  async findOrWait(fullName: string, scope: ToolScope, timeoutMs: number): Promise<ResolvedTool | undefined> {
    const found = await this.find(fullName, scope);
    if (found) return found;
    const toolset = this.toolsets.get(fullName.slice(0, fullName.indexOf("/")));
    if (!toolset?.waitFor || !offered(toolset, scope.org)) return undefined;
    if (!(await toolset.waitFor(fullName.slice(toolset.namespace.length + 1), scope, timeoutMs))) return undefined;
    return this.find(fullName, scope);
  }

  /** Looks a tool up by full name, whether or not the agent's patterns include it (recovery, approvals). */
  async find(fullName: string, scope: ToolScope): Promise<ResolvedTool | undefined> {
    const slash = fullName.indexOf("/");
    if (slash < 0) return undefined;
    const toolset = this.toolsets.get(fullName.slice(0, slash));
    if (!toolset || !offered(toolset, scope.org)) return undefined;
    const info = (await toolset.list(scope)).find((t) => t.name === fullName);
    return info ? { ...info, modelName: toModelToolName(info.name), toolset, local: fullName.slice(slash + 1) } : undefined;
  }
}

/** Whether agents of `org` may use `toolset` (see Toolset.offeredTo). */
function offered(toolset: Toolset, org: string): boolean {
  return toolset.offeredTo?.(org) ?? true;
}
