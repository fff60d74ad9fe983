import { WardrikError, parseJsonWithin } from "@wardrik/protocol";
import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import { judgeCall } from "../policy/judge-call.js";
import { compileToolPattern } from "../policy/match-tool.js";
import type { Decision, DecisionResult, JudgeSpec } from "../policy/types.js";
import type { NewCall } from "../store/calls.js";
import type { Writer } from "../store/writer.js";
import type { ResolvedTool } from "../tools/tool-registry.js";
import { fromModelToolName } from "../tools/toolset.js";
import type { AgentDriver } from "./agent-driver.js";
import { costOf, type ModelReply } from "./call-model.js";
import { isSafeToRepeat } from "./recovery.js";
import { toolPatternsOf } from "../config/types.js";

/** A call whose policy rule hands it to a judge model; it holds the rule's on_error decision until judged. */
export interface JudgeTask {
  call: NewCall;
  spec: JudgeSpec;
  tool: ResolvedTool;
}

/** The calls of a model reply, each decided by the policy, and those a judge still has to decide. */
export interface PlannedRound {
  calls: NewCall[];
  judges: JudgeTask[];
}

/** What a judge decided about one call: the data of its call.judged event. */
export interface JudgedCall {
  call: string;
  tool: string;
  verdict: Decision;
  reason: string;
  model: string;
  rule: string | null;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  error?: string;
}

/** How many judges of one round run at once. */
const JUDGES_AT_ONCE = 4;

/** The calls of a model reply, each decided by the policy before the round is saved. */
export function planCalls(d: AgentDriver, toolCalls: ModelReply["toolCalls"], tools: Map<string, ResolvedTool>): PlannedRound {
  const judges: JudgeTask[] = [];
  const calls = toolCalls.map((tc) => {
    const call = planCall(d, tc, tools);
    if (call.status === "running") {
      const r = policyDecision(d, call);
      apply(call, r);
      if (r.judge) judges.push({ call, spec: r.judge, tool: tools.get(tc.toolName)! });
    }
    return call;
  });
  return { calls, judges };
}

/**
 * Runs the round's judges (a few at once) and applies their verdicts to the
 * calls. The judge sees the call, the tool's and the agent's descriptions
 * and the latest messages, never the agent's instructions; its own prompt
 * comes from the policy file. Throws only when `signal` aborts.
 */
export async function runJudges(
  d: AgentDriver,
  tasks: JudgeTask[],
  context: { prompt: LanguageModelV3Prompt; replyText: string; signal: AbortSignal },
): Promise<JudgedCall[]> {
  const out: JudgedCall[] = new Array<JudgedCall>(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      out[i] = await judgeOne(d, tasks[i]!, context);
    }
  };
  await Promise.all(Array.from({ length: Math.min(JUDGES_AT_ONCE, tasks.length) }, worker));
  return out;
}

async function judgeOne(
  d: AgentDriver,
  task: JudgeTask,
  context: { prompt: LanguageModelV3Prompt; replyText: string; signal: AbortSignal },
): Promise<JudgedCall> {
  const { call, spec, tool } = task;
  const base = { call: call.id, tool: call.tool, rule: call.rule };
  let model;
  try {
    model = d.hooks.resolveModel(spec.model, d.def);
  } catch (err) {
    const error = `the judge's model ${spec.model} cannot be used: ${(err as Error).message}`;
    const reason = `The judge (${spec.model}) gave no usable verdict, so this call is ${spec.on_error === "ask" ? "left to a person" : "refused"}: ${error}`;
    apply(call, { decision: spec.on_error, reason });
    return { ...base, verdict: spec.on_error, reason, model: spec.model, input_tokens: 0, output_tokens: 0, cost_usd: 0, error };
  }
  const verdict = await judgeCall({
    spec,
    model: model.model,
    signal: context.signal,
    tool: { name: call.tool, description: tool.description },
    args: call.args,
    agent: { name: d.def.name, description: d.def.description },
    conversation: context.prompt,
    replyText: context.replyText,
  });
  apply(call, { decision: verdict.decision, reason: verdict.reason });
  return {
    ...base,
    verdict: verdict.decision,
    reason: verdict.reason,
    model: model.ref,
    input_tokens: verdict.usage.input,
    output_tokens: verdict.usage.output,
    cost_usd: costOf(verdict.usage, model.price),
    ...(verdict.error !== undefined ? { error: verdict.error } : {}),
  };
}

/** Records the round's verdicts, in the commit that saves the round (before each call's call.decided). */
export function recordJudged(w: Writer, d: AgentDriver, run: string, judged: JudgedCall[]): void {
  for (const j of judged) w.emit(d.ref, "call.judged", j, { run });
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
    // A model's output is not to be trusted more than a request: the same depth limit holds.
    args = tc.input === "" ? {} : parseJsonWithin(tc.input, { maxDepth: d.opts.jsonDepth }, "The JSON of the arguments");
  } catch (err) {
    const tooDeep = WardrikError.isInstance(err) && err.code === "json_too_deep";
    return {
      ...base,
      args: {},
      status: "failed",
      result: tooDeep ? err.message : `The arguments were not valid JSON: ${tc.input.slice(0, 200)}`,
      errorCode: "invalid_args",
    };
  }
  if (!tool) {
    const full = fromModelToolName(tc.toolName);
    const mayUse = toolPatternsOf(d.def).some((p) => compileToolPattern(p)(full));
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

function policyDecision(d: AgentDriver, c: NewCall): DecisionResult {
  return d.hooks.decide({
    agent: { ...d.def, id: d.id, org: d.org },
    tool: c.tool,
    args: c.args,
    readOnly: c.readOnly,
    idempotent: c.idempotent,
  });
}

/**
 * Sets the policy's decision on a call saved undecided by an older release.
 * A judge is not consulted there (the conversation it would see has moved
 * on): a person decides instead.
 */
export function decide(d: AgentDriver, c: NewCall): void {
  const r = policyDecision(d, c);
  if (r.judge) apply(c, { ...r, decision: "ask", reason: `${r.reason} (a person decides: this call was saved before it could be judged)` });
  else apply(c, r);
}

/** Sets a decision on a call that could run until now. */
function apply(c: NewCall, r: Pick<DecisionResult, "decision" | "reason" | "ruleSource">): void {
  c.decision = r.decision;
  c.reason = r.reason;
  if (r.ruleSource !== undefined) c.rule = r.ruleSource;
  c.status = r.decision === "ask" ? "waiting" : r.decision === "deny" ? "denied" : "running";
  if (r.decision === "deny") Object.assign(c, { result: `Denied by policy: ${r.reason}`, errorCode: "denied" });
  else delete c.result;
  if (r.decision !== "deny") delete c.errorCode;
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
    if (!toolPatternsOf(d.def).some((p) => compileToolPattern(p)(full))) continue;
    const graceMs = d.graceLeftMs();
    if (graceMs > 0)
      d.opts.log("info", "a tool the model asked for is not served yet: waiting for it", { agent: d.id, tool: full, grace_ms: graceMs });
    const found = await d.tools.findOrWait(full, scope, graceMs);
    if (found) {
      tools.set(modelName, found);
      added = true;
    }
  }
  return added;
}
