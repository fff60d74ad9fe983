/** The policy decision seam: every tool call passes `decide()` before it runs. */

export type Decision = "allow" | "ask" | "deny";

export interface PolicyRule {
  tool: string;
  when?: Record<string, Condition>;
  decision: Decision;
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
}
