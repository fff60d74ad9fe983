import { describe, expect, it } from "vitest";
import { PolicyLoadError, compilePolicy, decide, parsePolicyFile } from "../../src/policy/index.js";
import { readVerdict } from "../../src/policy/judge-call.js";

const FILE = "policies/mail.yaml";

const JUDGED = `rules:
  - tool: workers/email_customer
    decision: judge
    judge:
      model: fast
      prompt: Allow only emails about the customer's own order.
      on_error: deny
  - tool: workers/*
    decision: judge
    judge: { model: openai/gpt-4o-mini, prompt: Be careful. }
`;

function errorOf(text: string): string {
  try {
    parsePolicyFile(text, FILE);
  } catch (error) {
    expect(PolicyLoadError.isInstance(error)).toBe(true);
    return (error as Error).message;
  }
  throw new Error("expected a PolicyLoadError");
}

describe("judge rules in policy files", () => {
  it("reads a judge with its model, prompt and on_error (ask by default)", () => {
    const policy = parsePolicyFile(JUDGED, FILE);
    expect(policy.rules).toEqual([
      {
        tool: "workers/email_customer",
        decision: "judge",
        judge: { model: "fast", prompt: "Allow only emails about the customer's own order.", on_error: "deny" },
        source: "policies/mail.yaml:2",
      },
      {
        tool: "workers/*",
        decision: "judge",
        judge: { model: "openai/gpt-4o-mini", prompt: "Be careful.", on_error: "ask" },
        source: "policies/mail.yaml:8",
      },
    ]);
  });

  it("decide() names the judge, with on_error as the decision should it fail", () => {
    const policy = compilePolicy(parsePolicyFile(JUDGED, FILE));
    expect(decide(policy, { tool: "workers/email_customer", args: {}, readOnly: false })).toEqual({
      decision: "deny",
      reason: "Rule 1 of policy mail: judge",
      rule: 0,
      ruleSource: "policies/mail.yaml:2",
      judge: { model: "fast", prompt: "Allow only emails about the customer's own order.", on_error: "deny" },
    });
    expect(decide(policy, { tool: "workers/refund", args: {}, readOnly: false })).toMatchObject({
      decision: "ask",
      judge: { model: "openai/gpt-4o-mini" },
    });
  });

  it("refuses a judge rule without a judge, a judge on another decision, and bad judge keys", () => {
    expect(errorOf("rules:\n  - tool: a/*\n    decision: judge\n")).toBe(
      'policies/mail.yaml:2: key "rules[0].judge" is required when decision is judge (judge: { model, prompt })',
    );
    expect(errorOf("rules:\n  - tool: a/*\n    decision: allow\n    judge: { model: fast, prompt: x }\n")).toBe(
      "policies/mail.yaml:4: rules[0].judge is only allowed with decision: judge (got allow)",
    );
    expect(errorOf("rules:\n  - tool: a/*\n    decision: judge\n    judge: { model: fast }\n")).toMatch(
      /^policies\/mail\.yaml:4: key "rules\[0\]\.judge\.prompt" is required/,
    );
    expect(errorOf("rules:\n  - tool: a/*\n    decision: judge\n    judge: { model: fast, prompt: x, on_error: allow }\n")).toBe(
      'policies/mail.yaml:4: rules[0].judge.on_error must be one of ask, deny (got "allow")',
    );
  });
});

describe("reading a judge's answer", () => {
  const text = (t: string) => [{ type: "text" as const, text: t }];

  it("takes a JSON object, also inside a Markdown fence or as a tool call's input", () => {
    expect(readVerdict(text('{"decision":"deny","reason":" Not hers. "}'))).toEqual({ decision: "deny", reason: "Not hers." });
    expect(readVerdict(text('```json\n{"decision":"allow","reason":"ok"}\n```'))).toEqual({ decision: "allow", reason: "ok" });
    expect(readVerdict([{ type: "tool-call", toolCallId: "c1", toolName: "json", input: '{"decision":"ask","reason":"unsure"}' }])).toEqual(
      {
        decision: "ask",
        reason: "unsure",
      },
    );
  });

  it("says what is wrong with an answer it cannot use", () => {
    expect(readVerdict(text(""))).toEqual({ problem: "the answer was empty" });
    expect(readVerdict(text("yes"))).toEqual({ problem: 'the answer is not JSON: "yes"' });
    expect(readVerdict(text('{"decision":"allow"}'))).toMatchObject({ problem: expect.stringMatching(/^reason /) });
    expect(readVerdict(text('{"decision":"approve","reason":"x"}'))).toMatchObject({ problem: expect.stringMatching(/^decision /) });
    expect(readVerdict(text('{"decision":"allow","reason":"  "}'))).toMatchObject({
      problem: 'reason must be a non-empty string (expected {"decision": "allow" | "deny" | "ask", "reason": "..."})',
    });
  });
});
