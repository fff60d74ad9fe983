import { compileToolPattern } from "../policy/match-tool.js";
import type { NewCall } from "../store/calls.js";
import type { ResolvedTool } from "../tools/tool-registry.js";
import { fromModelToolName } from "../tools/toolset.js";
import type { AgentDriver } from "./agent-driver.js";
import type { ModelReply } from "./call-model.js";
import { isSafeToRepeat } from "./recovery.js";

/** The calls of a model reply, each decided by the policy before the round is saved. */
export function planCalls(d: AgentDriver, toolCalls: ModelReply["toolCalls"], tools: Map<string, ResolvedTool>): NewCall[] {
  return toolCalls.map((tc) => {
    const call = planCall(d, tc, tools);
    if (call.status === "running") decide(d, call);
    return call;
  });
}

function planCall(d: AgentDriver, tc: ModelReply["toolCalls"][number], tools: Map<string, ResolvedTool>): NewCall {
  const tool = tools.get(tc.toolName);
  const id = d.store.ids.next("call");
  const base = {
    id,
    modelCallId: tc.toolCallId,
    tool: tool?.name ?? fromModelToolName(tc.toolName),
    readOnly: tool?.readOnly ?? false,
    idempotent: tool?.idempotent ?? false,
    retrySafe: tool
      ? isSafeToRepeat({
          namespace: tool.toolset.namespace,
          kind: tool.toolset.kind ?? "other",
          readOnly: tool.readOnly,
          idempotent: tool.idempotent,
        })
      : false,
    decision: null,
    reason: null,
    rule: null,
  };
  let args: unknown;
  try {
    args = tc.input === "" ? {} : JSON.parse(tc.input);
  } catch {
    return {
      ...base,
      args: {},
      status: "failed",
      result: `The arguments were not valid JSON: ${tc.input.slice(0, 200)}`,
      errorCode: "invalid_args",
    };
  }
  if (!tool) {
    const full = fromModelToolName(tc.toolName);
    const mayUse = d.def.tools.some((p) => compileToolPattern(p)(full));
    if (mayUse && full.startsWith("workers/")) {
      return { ...base, args, status: "failed", result: noWorkerMessage(full), errorCode: "no_worker" };
    }
    return {
      ...base,
      args,
      status: "failed",
      result: `Unknown tool ${base.tool}. ${availableToolsText(tools)}`,
      errorCode: "unknown_tool",
    };
  }
  return { ...base, args, status: "running" };
}

/** Sets the policy's decision on a call that can run. */
export function decide(d: AgentDriver, c: NewCall): void {
  const r = d.hooks.decide({
    agent: { ...d.def, id: d.id, org: d.org },
    tool: c.tool,
    args: c.args,
    readOnly: c.readOnly,
    idempotent: c.idempotent,
  });
  c.decision = r.decision;
  c.reason = r.reason;
  c.rule = r.ruleSource ?? null;
  if (r.decision === "ask") c.status = "waiting";
  else if (r.decision === "deny") Object.assign(c, { status: "denied", result: `Denied by policy: ${r.reason}`, errorCode: "denied" });
}

export function noWorkerMessage(full: string): string {
  const name = full.slice(full.indexOf("/") + 1);
  return `No worker serves ${full}. Start a worker process that registers "${name}" with wardrik.tool() and calls listen().`;
}

export function availableToolsText(tools: Map<string, ResolvedTool>): string {
  const names = [...tools.keys()];
  return names.length === 0 ? "This agent has no tools." : `Available tools: ${names.join(", ")}.`;
}

/**
 * Tools the model names that this agent may use but nobody serves yet (a
 * worker still reconnecting after a start): wait for them while the start's
 * grace lasts, and add them to `tools`. True when some were added.
 */
export async function waitForMissingTools(d: AgentDriver, modelNames: string[], tools: Map<string, ResolvedTool>): Promise<boolean> {
  const scope = { org: d.org, agentId: d.id };
  let added = false;
  for (const modelName of new Set(modelNames)) {
    if (tools.has(modelName)) continue;
    const full = fromModelToolName(modelName);
    if (!d.def.tools.some((p) => compileToolPattern(p)(full))) continue;
    const found = await d.tools.findOrWait(full, scope, d.graceLeftMs());
    if (found) {
      tools.set(modelName, found);
      added = true;
    }
  }
  return added;
}
