/** The policy decision seam: every tool call passes `decide()` before it runs. */

export type Decision = "allow" | "ask" | "deny";

/** What a rule may say: a decision, or `judge` to let a model decide under the rule's prompt. */
export type RuleDecision = Decision | "judge";

/** A model that decides calls for a rule (`decision: judge`). Only the policy file sets it. */
export interface JudgeSpec {
  /** A `models:` entry of config.yaml or `provider/model-id`. */
  model: string;
  /** What the judge is told to allow, deny or hand to a person. */
  prompt: string;
  /** The decision when the judge fails or answers something unusable. */
  on_error: "ask" | "deny";
}

export interface PolicyRule {
  tool: string;
  when?: Record<string, Condition>;
  decision: RuleDecision;
  /** Set exactly when `decision` is `judge`. */
  judge?: JudgeSpec;
  reason?: string;
  /** Where the rule was written, e.g. `policies/careful.yaml:12`. */
  source?: string;
}

export type Condition = {
  eq?: unknown;
  ne?: unknown;
  gt?: number;
  gte?: number;
  lt?: number;
  lte?: number;
  in?: unknown[];
  matches?: string;
  exists?: boolean;
};

export interface Budget {
  per_turn_usd?: number;
  per_day_usd?: number;
}

export interface Policy {
  name: string;
  description?: string;
  rules: PolicyRule[];
  budget?: Budget;
}

export interface CallToDecide {
  /** `namespace/tool` */
  tool: string;
  args: unknown;
  readOnly: boolean;
}

export interface DecisionResult {
  decision: Decision;
  reason: string;
  /** Index of the rule that decided; undefined when a default decided. */
  rule?: number;
  ruleSource?: string;
  /**
   * Set when a judge rule matched: the judge decides, and `decision` and
   * `reason` are what applies when it cannot (its `on_error`).
   */
  judge?: JudgeSpec;
}
