import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PolicyLoadError, compilePolicy, decide, loadPoliciesDir, parsePolicyFile } from "../../src/policy/index.js";

const FILE = "policies/careful.yaml";

const SPEC_EXAMPLE = `description: Ask before changing anything outside the files tool.
budget: { per_turn_usd: 0.50, per_day_usd: 5 }
rules:
  - tool: workers/refund_order
    when: { amount: { gt: 100 } }     # conditions on the call's arguments
    decision: deny
    reason: Refunds over $100 go through finance.
  - tool: files/*
    decision: allow
  - tool: linear/*
    decision: ask
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

describe("parsePolicyFile", () => {
  it("reads the SPEC example, with rule sources", () => {
    expect(parsePolicyFile(SPEC_EXAMPLE, FILE)).toEqual({
      name: "careful",
      description: "Ask before changing anything outside the files tool.",
      budget: { per_turn_usd: 0.5, per_day_usd: 5 },
      rules: [
        {
          tool: "workers/refund_order",
          when: { amount: { gt: 100 } },
          decision: "deny",
          reason: "Refunds over $100 go through finance.",
          source: "policies/careful.yaml:4",
        },
        { tool: "files/*", decision: "allow", source: "policies/careful.yaml:8" },
        { tool: "linear/*", decision: "ask", source: "policies/careful.yaml:10" },
      ],
    });
  });

  it("decides as the SPEC example says once compiled", () => {
    const policy = compilePolicy(parsePolicyFile(SPEC_EXAMPLE, FILE));
    expect(decide(policy, { tool: "workers/refund_order", args: { amount: 250 }, readOnly: false })).toEqual({
      decision: "deny",
      reason: "Refunds over $100 go through finance.",
      rule: 0,
      ruleSource: "policies/careful.yaml:4",
    });
    expect(decide(policy, { tool: "files/write", args: {}, readOnly: false }).decision).toBe("allow");
    expect(decide(policy, { tool: "linear/list", args: {}, readOnly: true }).decision).toBe("ask");
  });

  it("reads a bare value as eq, dotted paths, and several operators", () => {
    const policy = parsePolicyFile(
      `rules:
  - tool: workers/ship
    when:
      customer.address.country: DE
      items.0.qty: { gte: 1, lte: 3 }
      note: null
      sku: { in: [A-1, B-2], matches: "^[AB]-" }
      coupon: { exists: false }
    decision: allow
`,
      "policies/ship.yml",
    );
    expect(policy.name).toBe("ship");
    expect(policy.rules[0]?.when).toEqual({
      "customer.address.country": { eq: "DE" },
      "items.0.qty": { gte: 1, lte: 3 },
      note: { eq: null },
      sku: { in: ["A-1", "B-2"], matches: "^[AB]-" },
      coupon: { exists: false },
    });
  });

  it("accepts a policy without rules", () => {
    expect(parsePolicyFile("description: defaults only\n", FILE)).toEqual({ name: "careful", description: "defaults only", rules: [] });
  });
});

describe("parsePolicyFile errors name the file, line and key", () => {
  it("rejects an unknown decision", () => {
    const text = SPEC_EXAMPLE.replace("decision: allow", "decision: maybe");
    expect(errorOf(text)).toBe('policies/careful.yaml:9: rules[1].decision must be one of allow, ask, deny, judge (got "maybe")');
  });

  it("rejects missing required keys at the rule's line", () => {
    expect(errorOf("rules:\n  - tool: files/*\n    decision: allow\n  - tool: linear/*\n")).toBe(
      'policies/careful.yaml:4: key "rules[1].decision" is required (one of allow, ask, deny, judge)',
    );
    expect(errorOf("rules:\n  - decision: allow\n")).toBe(
      'policies/careful.yaml:2: key "rules[0].tool" is required (a tool pattern like files/* or workers/find_order)',
    );
  });

  it("rejects unknown keys where they are written", () => {
    expect(errorOf("description: x\nrule:\n  - tool: a\n")).toBe(
      'policies/careful.yaml:2: key "rule" is not allowed: did you mean "rules"? (allowed: description, budget, rules)',
    );
    expect(errorOf("rules:\n  - tool: a/*\n    decison: deny\n")).toBe(
      'policies/careful.yaml:3: key "rules[0].decison" is not allowed: did you mean "decision"? (allowed: tool, when, decision, judge, reason)',
    );
    expect(errorOf("budget:\n  per_turn_usd: 1\n  per_week_usd: 3\n")).toBe(
      'policies/careful.yaml:3: key "budget.per_week_usd" is not allowed (allowed: per_turn_usd, per_day_usd)',
    );
  });

  it("rejects budgets that are not positive numbers", () => {
    expect(errorOf("budget:\n  per_turn_usd: 0\n")).toBe(
      "policies/careful.yaml:2: budget.per_turn_usd must be a positive number of dollars (got 0)",
    );
    expect(errorOf("budget:\n  per_day_usd: five\n")).toBe(
      'policies/careful.yaml:2: budget.per_day_usd must be a positive number of dollars (got "five")',
    );
    expect(errorOf("budget: 5\n")).toBe("policies/careful.yaml:1: budget must be a map (got 5)");
  });

  it("rejects bad conditions at the operator's line", () => {
    const rule = (when: string) => `rules:\n  - tool: a/*\n    decision: deny\n    when:\n${when}`;
    expect(errorOf(rule("      email:\n        matches: '(unclosed'\n"))).toMatch(
      /^policies\/careful\.yaml:6: rules\[0\]\.when\.email\.matches is not a valid regular expression: /,
    );
    expect(errorOf(rule("      amount:\n        gt: '100'\n"))).toBe("policies/careful.yaml:6: rules[0].when.amount.gt must be a number");
    expect(errorOf(rule("      amount:\n        lt: 5\n        bigger: 3\n"))).toBe(
      'policies/careful.yaml:7: key "rules[0].when.amount.bigger" is not an operator (expected one of eq, ne, gt, gte, lt, lte, in, matches, exists)',
    );
    expect(errorOf(rule("      customer.country: { in: DE }\n"))).toBe(
      'policies/careful.yaml:5: rules[0].when["customer.country"].in must be a list',
    );
    expect(errorOf(rule("      flag: { exists: maybe }\n"))).toBe(
      "policies/careful.yaml:5: rules[0].when.flag.exists must be true or false",
    );
    expect(errorOf(rule("      tags: [a, b]\n"))).toBe(
      "policies/careful.yaml:5: rules[0].when.tags must be a value or a condition map; to match one of several values write { in: [...] }",
    );
    expect(errorOf(rule("      amount: {}\n"))).toMatch(/^policies\/careful\.yaml:5: rules\[0\]\.when\.amount has no operator/);
    expect(errorOf(rule("      a..b: 1\n"))).toMatch(
      /^policies\/careful\.yaml:5: rules\[0\]\.when\["a\.\.b"\] is not a valid argument path/,
    );
    expect(errorOf("rules:\n  - tool: a/*\n    decision: deny\n    when: amount\n")).toBe(
      'policies/careful.yaml:4: rules[0].when must be a map (got "amount")',
    );
  });

  it("rejects wrong shapes", () => {
    expect(errorOf("")).toBe("policies/careful.yaml:1: the file is empty; a policy is a map of description, budget, rules");
    expect(errorOf("- tool: a\n")).toBe("policies/careful.yaml:1: the top level must be a map of description, budget, rules (got a list)");
    expect(errorOf("rules:\n  tool: a\n")).toBe("policies/careful.yaml:2: rules must be a list (got a map)");
    expect(errorOf("rules:\n  - files/*\n")).toBe('policies/careful.yaml:2: rules[0] must be a map with tool and decision (got "files/*")');
    expect(errorOf("rules:\n  - tool: files read\n    decision: allow\n")).toBe(
      'policies/careful.yaml:2: rules[0].tool must be a tool pattern like files/* without spaces (got "files read")',
    );
    expect(errorOf("rules:\n  - tool: a/*\n    decision: deny\n    reason:\n")).toBe(
      "policies/careful.yaml:4: rules[0].reason must be a non-empty string (got null)",
    );
  });

  it("reports YAML syntax errors with their line, and hints at an unquoted *", () => {
    expect(errorOf("rules:\n  - tool: *\n    decision: deny\n")).toBe(
      'policies/careful.yaml:2: invalid YAML: Alias cannot be an empty string (a pattern starting with * must be quoted: tool: "*")',
    );
    expect(errorOf("description: a\ndescription: b\n")).toBe("policies/careful.yaml:2: invalid YAML: Map keys must be unique");
  });
});

describe("loadPoliciesDir", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function workspace(files: Record<string, string>): string {
    const dir = mkdtempSync(join(tmpdir(), "wardrik-policies-"));
    dirs.push(dir);
    mkdirSync(join(dir, "policies"));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, "policies", name), text);
    return dir;
  }

  it("loads *.yaml and *.yml by basename, keeping errors per policy", () => {
    const dir = workspace({
      "careful.yaml": SPEC_EXAMPLE,
      "open.yml": "rules:\n  - tool: '*'\n    decision: allow\n",
      "broken.yaml": "rules:\n  - tool: a/*\n    decision: nope\n",
      "README.md": "not a policy",
    });
    const policies = loadPoliciesDir(dir);
    expect([...policies.keys()]).toEqual(["broken", "careful", "open"]);
    expect(policies.get("careful")).toMatchObject({ name: "careful", rules: [{}, {}, {}] });
    expect(policies.get("open")).toMatchObject({ rules: [{ tool: "*", source: "policies/open.yml:2" }] });
    expect(policies.get("broken")).toEqual({
      error: 'policies/broken.yaml:3: rules[0].decision must be one of allow, ask, deny, judge (got "nope")',
    });
  });

  it("reports a name defined by both a .yaml and a .yml file", () => {
    const dir = workspace({ "a.yaml": "rules: []\n", "a.yml": "rules: []\n" });
    expect(loadPoliciesDir(dir).get("a")).toEqual({ error: 'policies/a.yaml and policies/a.yml both define policy "a"; keep one' });
  });

  it("finds no policies when there is no policies directory", () => {
    const dir = mkdtempSync(join(tmpdir(), "wardrik-policies-"));
    dirs.push(dir);
    expect(loadPoliciesDir(dir).size).toBe(0);
  });
});
