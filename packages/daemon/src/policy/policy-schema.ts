/**
 * A policy file (policies/NAME.yaml) as a zod schema. Conditions are checked
 * by the same compiler that runs them, so a file that loads always compiles.
 */
import { z } from "zod";
import { addIssue } from "../config/schema-kit.js";
import { CONDITION_OPERATORS, ConditionError, compileCondition } from "./conditions.js";
import { JUDGE_ON_ERROR, RULE_DECISIONS } from "./decide-call.js";
import type { Condition } from "./types.js";

/** Policies hold no secrets, so their messages may show what was written. */
function shown(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a map";
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

/** An error function: `rule (got VALUE)` for a wrong value; the shared wording otherwise. */
const withValue = (rule: string) => (issue: { code?: string; input?: unknown }) =>
  issue.input === undefined || issue.code === "unrecognized_keys" ? undefined : `${rule} (got ${shown(issue.input)})`;

const dollars = () =>
  z
    .number({ error: withValue("must be a positive number of dollars") })
    .positive({ error: withValue("must be a positive number of dollars") });

const operators = z.strictObject(
  {
    eq: z.unknown().optional().describe("Equal to this value."),
    ne: z.unknown().optional().describe("Not equal to this value (also true when the argument is missing)."),
    gt: z.number().optional(),
    gte: z.number().optional(),
    lt: z.number().optional(),
    lte: z.number().optional(),
    in: z.array(z.unknown()).optional().describe("One of these values."),
    matches: z.string().optional().describe("A regular expression the argument must match."),
    exists: z.boolean().optional().describe("Whether the argument is present."),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys" ? `is not an operator (expected one of ${CONDITION_OPERATORS.join(", ")})` : undefined,
  },
);

const condition = z
  .union([z.string(), z.number(), z.boolean(), z.null(), operators], {
    error: (issue) =>
      Array.isArray(issue.input) ? "must be a value or a condition map; to match one of several values write { in: [...] }" : undefined,
  })
  // A bare value is shorthand for eq.
  .transform((value): Condition => (typeof value === "object" && value !== null ? value : { eq: value }));

const when = z
  .record(z.string(), condition, { error: withValue("must be a map") })
  .superRefine((conditions, ctx) => {
    for (const [path, cond] of Object.entries(conditions)) {
      try {
        compileCondition(path, cond);
      } catch (error) {
        if (!(error instanceof ConditionError)) throw error;
        addIssue(ctx, error.operator === undefined ? [path] : [path, error.operator], error.problem);
      }
    }
  })
  .describe("Conditions on the call's arguments, by dotted path (customer.address.country); all must hold.");

const nonEmpty = () =>
  z.string({ error: withValue("must be a non-empty string") }).regex(/\S/, { error: withValue("must be a non-empty string") });

const judge = z
  .strictObject(
    {
      model: nonEmpty().describe("The judge's model: a models: entry of config.yaml or provider/model-id."),
      prompt: nonEmpty().describe("What the judge allows, denies or hands to a person. The agent's model never sees it."),
      on_error: z
        .enum(JUDGE_ON_ERROR as ["ask", "deny"], { error: withValue(`must be one of ${JUDGE_ON_ERROR.join(", ")}`) })
        .default("ask")
        .describe("The decision when the judge fails or its answer cannot be used: ask (default) or deny."),
    },
    { error: withValue("must be a map with model and prompt") },
  )
  .describe("A model that decides calls matching this rule: allow, deny (with a reason for the agent) or ask a person.");

const rule = z
  .strictObject(
    {
      tool: z
        .string({
          error: (issue) =>
            issue.input === undefined
              ? "is required (a tool pattern like files/* or workers/find_order)"
              : `must be a tool pattern like files/* (got ${shown(issue.input)})`,
        })
        .regex(/^\S+$/, { error: withValue("must be a tool pattern like files/* without spaces") })
        .describe("Tool pattern: files/*, workers/refund_order, linear/*, *."),
      when: when.optional(),
      decision: z
        .enum(RULE_DECISIONS as ["allow", "ask", "deny", "judge"], { error: withValue(`must be one of ${RULE_DECISIONS.join(", ")}`) })
        .describe("allow, ask (a person approves), deny (the model is told why) or judge (a model decides, see judge)."),
      judge: judge.optional(),
      reason: z
        .string({ error: withValue("must be a non-empty string") })
        .regex(/\S/, { error: withValue("must be a non-empty string") })
        .optional()
        .describe("Why; the model is told on deny, a person sees it on ask."),
    },
    { error: withValue("must be a map with tool and decision") },
  )
  .superRefine((r, ctx) => {
    if (r.decision === "judge" && r.judge === undefined)
      addIssue(ctx, ["judge"], "is required when decision is judge (judge: { model, prompt })", true);
    if (r.decision !== "judge" && r.judge !== undefined)
      addIssue(ctx, ["judge"], `is only allowed with decision: judge (got ${r.decision})`);
  });

export const policySchema = z
  .strictObject(
    {
      description: z
        .string({ error: withValue("must be a non-empty string") })
        .regex(/\S/, { error: withValue("must be a non-empty string") })
        .optional(),
      budget: z
        .strictObject(
          {
            per_turn_usd: dollars().optional().describe("US dollars one turn may spend."),
            per_day_usd: dollars().optional().describe("US dollars an agent may spend per day."),
          },
          { error: withValue("must be a map") },
        )
        .optional(),
      rules: z
        .array(rule, { error: withValue("must be a list") })
        .default(() => [])
        .describe("Checked in order; the first rule whose tool and conditions match decides."),
    },
    { error: withValue("must be a map of description, budget, rules") },
  )
  .describe("A Wardrik policy (policies/NAME.yaml): rules the model cannot see or change, and a budget.");

export type PolicyFile = z.output<typeof policySchema>;
