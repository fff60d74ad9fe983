import { describe, expect, it } from "vitest";
import {
  NEEDS_APPROVAL_DEFAULT,
  READ_ONLY_DEFAULT,
  compilePolicy,
  decide,
  type CallToDecide,
  type PolicyRule,
} from "../../src/policy/index.js";

function policyOf(rules: PolicyRule[], name = "careful") {
  return compilePolicy({ name, rules });
}

function call(tool: string, args: unknown = {}, readOnly = false): CallToDecide {
  return { tool, args, readOnly };
}

describe("decide", () => {
  it("lets the first matching rule decide", () => {
    const policy = policyOf([
      { tool: "workers/refund_order", when: { amount: { gt: 100 } }, decision: "deny", reason: "Refunds over $100 go through finance." },
      { tool: "workers/*", decision: "allow" },
      { tool: "*", decision: "deny" },
    ]);
    expect(decide(policy, call("workers/refund_order", { amount: 150 }))).toEqual({
      decision: "deny",
      reason: "Refunds over $100 go through finance.",
      rule: 0,
    });
    expect(decide(policy, call("workers/refund_order", { amount: 50 }))).toMatchObject({ decision: "allow", rule: 1 });
    expect(decide(policy, call("linear/create_issue"))).toMatchObject({ decision: "deny", rule: 2 });
  });

  it("names the rule and policy when the rule gives no reason", () => {
    const policy = compilePolicy({
      name: "careful",
      rules: [
        { tool: "files/*", decision: "allow" },
        { tool: "linear/*", decision: "deny", source: "policies/careful.yaml:9" },
      ],
    });
    expect(decide(policy, call("linear/delete_issue"))).toEqual({
      decision: "deny",
      reason: "Rule 2 of policy careful: deny",
      rule: 1,
      ruleSource: "policies/careful.yaml:9",
    });
  });

  it("denies a read-only tool by an explicit rule", () => {
    const policy = policyOf([{ tool: "files/read", when: { path: { matches: "^secrets/" } }, decision: "deny" }]);
    expect(decide(policy, call("files/read", { path: "secrets/key.pem" }, true))).toMatchObject({ decision: "deny", rule: 0 });
    expect(decide(policy, call("files/read", { path: "src/a.ts" }, true))).toBe(READ_ONLY_DEFAULT);
  });

  it("allows read-only tools and asks for the rest when no rule matches", () => {
    const policy = policyOf([{ tool: "linear/*", decision: "deny" }]);
    expect(decide(policy, call("files/list", {}, true))).toEqual({ decision: "allow", reason: "read-only tools are allowed by default" });
    expect(decide(policy, call("files/write", {}, false))).toEqual({
      decision: "ask",
      reason: "a tool that is not read-only needs approval by default",
    });
  });

  it("uses only the defaults without a policy", () => {
    expect(decide(undefined, call("files/read", {}, true))).toBe(READ_ONLY_DEFAULT);
    expect(decide(undefined, call("workers/refund_order", { amount: 1 }))).toBe(NEEDS_APPROVAL_DEFAULT);
  });

  it("reads a bare namespace pattern as the whole namespace", () => {
    const policy = policyOf([{ tool: "files", decision: "allow" }]);
    expect(decide(policy, call("files/write"))).toMatchObject({ decision: "allow", rule: 0 });
    expect(decide(policy, call("filesystem/write"))).toBe(NEEDS_APPROVAL_DEFAULT);
  });

  it("decides on dotted paths into nested arguments", () => {
    const policy = policyOf([
      { tool: "workers/ship", when: { "customer.address.country": { in: ["KP", "IR"] } }, decision: "deny" },
      { tool: "workers/ship", when: { "items.0.sku": { matches: "^GIFT-" }, "items.0.qty": { lte: 3 } }, decision: "allow" },
    ]);
    const address = (country: string) => ({ customer: { address: { country } } });
    expect(decide(policy, call("workers/ship", address("IR")))).toMatchObject({ decision: "deny" });
    expect(decide(policy, call("workers/ship", { ...address("DE"), items: [{ sku: "GIFT-1", qty: 2 }] }))).toMatchObject({
      decision: "allow",
    });
    expect(decide(policy, call("workers/ship", { ...address("DE"), items: [{ sku: "GIFT-1", qty: 5 }] }))).toBe(NEEDS_APPROVAL_DEFAULT);
  });

  it("returns frozen results", () => {
    const policy = policyOf([{ tool: "*", decision: "allow" }]);
    expect(Object.isFrozen(decide(policy, call("a/b")))).toBe(true);
    expect(Object.isFrozen(decide(undefined, call("a/b")))).toBe(true);
  });

  it("stays correct past the per-tool memo limit", () => {
    const policy = policyOf([
      { tool: "ns/even_*", decision: "deny" },
      { tool: "ns/*", when: { n: { gt: 0 } }, decision: "allow" },
    ]);
    for (let i = 0; i < 6000; i++) {
      const tool = i % 2 === 0 ? `ns/even_${i}` : `ns/odd_${i}`;
      const expected = i % 2 === 0 ? "deny" : "allow";
      expect(decide(policy, call(tool, { n: 1 })).decision).toBe(expected);
      expect(decide(policy, call(tool, { n: 0 })).decision).toBe(i % 2 === 0 ? "deny" : "ask");
    }
  });
});

describe("compilePolicy", () => {
  it("rejects what it cannot compile, naming the rule", () => {
    expect(() =>
      policyOf([
        { tool: "a/*", decision: "allow" },
        { tool: "a/*", when: { q: { matches: "[" } }, decision: "deny" },
      ]),
    ).toThrow(/^Rule 2 of policy careful: when\.q\.matches is not a valid regular expression/);
    expect(() => policyOf([{ tool: "a/*", decision: "maybe" as never, source: "policies/careful.yaml:4" }])).toThrow(
      'Rule 1 of policy careful (policies/careful.yaml:4): decision must be one of allow, ask, deny, judge (got "maybe")',
    );
    expect(() => policyOf([{ tool: "", decision: "allow" }])).toThrow("Rule 1 of policy careful: tool must be a non-empty pattern");
  });
});
