export type { Budget, CallToDecide, Condition, Decision, DecisionResult, Policy, PolicyRule } from "./types.js";
export { compileToolPattern } from "./match-tool.js";
export {
  CONDITION_OPERATORS,
  ConditionError,
  compileCondition,
  compileWhen,
  type ArgsPredicate,
  type ConditionOperator,
} from "./conditions.js";
export { DECISIONS, NEEDS_APPROVAL_DEFAULT, READ_ONLY_DEFAULT, compilePolicy, decide, type CompiledPolicy } from "./decide-call.js";
export { PolicyLoadError, loadPoliciesDir, parsePolicyFile, type PolicyLoadFailure } from "./load-policy.js";
