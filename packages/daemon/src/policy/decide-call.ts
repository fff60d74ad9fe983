import { ConditionError, compileWhen, type ArgsPredicate } from "./conditions.js";
import { compileToolPattern } from "./match-tool.js";
import type { CallToDecide, Decision, DecisionResult, Policy, RuleDecision } from "./types.js";

export const DECISIONS: readonly Decision[] = ["allow", "ask", "deny"];
/** What a rule may say: the decisions, or `judge`. */
export const RULE_DECISIONS: readonly RuleDecision[] = [...DECISIONS, "judge"];
export const JUDGE_ON_ERROR: readonly ("ask" | "deny")[] = ["ask", "deny"];

/** With no matching rule. Results are shared and frozen: decide() allocates nothing. */
export const READ_ONLY_DEFAULT: DecisionResult = Object.freeze({
  decision: "allow",
  reason: "read-only tools are allowed by default",
});
export const NEEDS_APPROVAL_DEFAULT: DecisionResult = Object.freeze({
  decision: "ask",
  reason: "a tool that is not read-only needs approval by default",
});

interface CompiledRule {
  readonly matchTool: (tool: string) => boolean;
  readonly matchArgs: ArgsPredicate;
  readonly result: DecisionResult;
}

/** A policy ready for decide(): patterns, regexes and results are built once, here. */
export interface CompiledPolicy {
  readonly policy: Policy;
  readonly rules: readonly CompiledRule[];
  /**
   * Memo: the rules whose pattern matches a tool name, in policy order, so a
   * known tool costs one map lookup plus its rules' conditions. Filled by
   * decide(); it never changes a result. Bounded by TOOL_MEMO_LIMIT.
   */
  readonly rulesByTool: Map<string, readonly CompiledRule[]>;
}

/** Far above the tools an agent has; keeps a stream of made-up tool names from growing memory. */
const TOOL_MEMO_LIMIT = 4096;

/**
 * Compiles a snapshot of `policy`: later changes to it are not seen. Throws on
 * a rule that cannot be compiled (bad decision, empty pattern, invalid condition);
 * policies from parsePolicyFile() have been checked already, with line numbers.
 */
export function compilePolicy(policy: Policy): CompiledPolicy {
  const rules = policy.rules.map((rule, index): CompiledRule => {
    const label = `Rule ${index + 1} of policy ${policy.name}`;
    const where = rule.source === undefined ? label : `${label} (${rule.source})`;
    if (!RULE_DECISIONS.includes(rule.decision)) {
      throw new Error(`${where}: decision must be one of ${RULE_DECISIONS.join(", ")} (got ${JSON.stringify(rule.decision)})`);
    }
    const judge = rule.decision === "judge" ? rule.judge : undefined;
    if (rule.decision === "judge" && (judge === undefined || !judge.model || !judge.prompt || !JUDGE_ON_ERROR.includes(judge.on_error))) {
      throw new Error(`${where}: a judge rule needs judge: { model, prompt, on_error: ask|deny }`);
    }
    if (typeof rule.tool !== "string" || rule.tool === "") throw new Error(`${where}: tool must be a non-empty pattern`);
    let matchArgs: ArgsPredicate;
    try {
      matchArgs = compileWhen(rule.when);
    } catch (error) {
      if (error instanceof ConditionError) throw new Error(`${where}: when.${error.message}`, { cause: error });
      throw error;
    }
    // A judge rule's own decision is what applies when its judge cannot answer.
    const result: DecisionResult = {
      decision: judge ? judge.on_error : (rule.decision as Decision),
      reason: rule.reason ?? `${label}: ${rule.decision}`,
      rule: index,
    };
    if (rule.source !== undefined) result.ruleSource = rule.source;
    if (judge) result.judge = Object.freeze({ ...judge });
    return { matchTool: compileToolPattern(rule.tool), matchArgs, result: Object.freeze(result) };
  });
  return { policy, rules, rulesByTool: new Map() };
}

/**
 * Decides one tool call. The first rule whose pattern and conditions match
 * decides; with none, read-only tools are allowed and the rest need approval.
 * `readOnly` only changes that default: a matching rule wins over it. No
 * policy means defaults only. Pure: same input, same (shared, frozen) result.
 */
export function decide(policy: CompiledPolicy | undefined, call: CallToDecide): DecisionResult {
  if (policy !== undefined) {
    const rules = policy.rulesByTool.get(call.tool) ?? rulesMatchingTool(policy, call.tool);
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i]!;
      if (rule.matchArgs(call.args)) return rule.result;
    }
  }
  return call.readOnly ? READ_ONLY_DEFAULT : NEEDS_APPROVAL_DEFAULT;
}

function rulesMatchingTool(policy: CompiledPolicy, tool: string): readonly CompiledRule[] {
  const rules = policy.rules.filter((rule) => rule.matchTool(tool));
  if (policy.rulesByTool.size < TOOL_MEMO_LIMIT) policy.rulesByTool.set(tool, rules);
  return rules;
}
