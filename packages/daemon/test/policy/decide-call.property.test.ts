import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  NEEDS_APPROVAL_DEFAULT,
  READ_ONLY_DEFAULT,
  compilePolicy,
  compileToolPattern,
  decide,
  type CallToDecide,
  type Condition,
  type Decision,
  type Policy,
  type PolicyRule,
} from "../../src/policy/index.js";

const namespaces = ["files", "workers", "linear", "mcp-search"] as const;
const toolNames = ["read", "write", "find_order", "refund_order", "delete_all"] as const;

const namespaceArb = fc.constantFrom(...namespaces);
const decisionArb = fc.constantFrom<Decision>("allow", "ask", "deny");
const toolArb = fc.tuple(namespaceArb, fc.constantFrom(...toolNames)).map(([ns, name]) => `${ns}/${name}`);

const argsArb = fc.record(
  {
    amount: fc.oneof(fc.integer({ min: -10, max: 300 }), fc.constant("150")),
    country: fc.constantFrom("DE", "FR", "US"),
    customer: fc.record({ tier: fc.constantFrom("gold", "basic"), address: fc.record({ zip: fc.string({ maxLength: 5 }) }) }),
    items: fc.array(fc.record({ sku: fc.constantFrom("A-1", "B-2", "GIFT-9") }), { maxLength: 2 }),
  },
  { requiredKeys: [] },
);

const conditionArb: fc.Arbitrary<[string, Condition]> = fc.oneof(
  fc.tuple(fc.constant("amount"), fc.record({ gt: fc.integer({ min: 0, max: 300 }) })),
  fc.tuple(fc.constant("amount"), fc.record({ gte: fc.integer({ min: 0, max: 300 }), lt: fc.integer({ min: 0, max: 300 }) })),
  fc.tuple(fc.constant("country"), fc.record({ eq: fc.constantFrom("DE", "FR", "US") })),
  fc.tuple(fc.constant("country"), fc.record({ in: fc.subarray(["DE", "FR", "US"]) })),
  fc.tuple(fc.constant("customer.tier"), fc.record({ ne: fc.constantFrom("gold", "basic") })),
  fc.tuple(fc.constant("items.0.sku"), fc.record({ matches: fc.constantFrom("^GIFT-", "-1$", "[AB]") })),
  fc.tuple(fc.constantFrom("customer.address.zip", "items.1"), fc.record({ exists: fc.boolean() })),
);

const whenArb = fc.option(
  fc.array(conditionArb, { minLength: 1, maxLength: 3 }).map((entries) => Object.fromEntries(entries)),
  { nil: undefined },
);

function patternArb(ns: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof(
    ns,
    ns.map((n) => `${n}/*`),
    fc.tuple(ns, fc.constantFrom(...toolNames)).map(([n, t]) => `${n}/${t}`),
    fc.tuple(ns, fc.constantFrom("f", "re", "d")).map(([n, p]) => `${n}/${p}*`),
  );
}

function ruleArb(pattern: fc.Arbitrary<string>): fc.Arbitrary<PolicyRule> {
  return fc.record({ tool: pattern, when: whenArb, decision: decisionArb }).map((rule) => {
    if (rule.when === undefined) delete rule.when;
    return rule;
  });
}

const anyRuleArb = ruleArb(fc.oneof(patternArb(namespaceArb), fc.constantFrom("*", "*/delete_*", "*_order")));
const callArb: fc.Arbitrary<CallToDecide> = fc.record({ tool: toolArb, args: argsArb, readOnly: fc.boolean() });

function policy(rules: PolicyRule[]): Policy {
  return { name: "p", rules };
}

/** Whether a rule matches a call on its own. */
function matchesAlone(rule: PolicyRule, call: CallToDecide): boolean {
  return decide(compilePolicy(policy([rule])), call).rule === 0;
}

/** Rules that cannot match `call`: other namespaces, or a condition on a path no call has. */
function nonMatchingRulesArb(call: CallToDecide): fc.Arbitrary<PolicyRule[]> {
  const ns = call.tool.split("/")[0]!;
  const others = namespaces.filter((n) => n !== ns);
  return fc.array(
    fc.oneof(
      ruleArb(patternArb(fc.constantFrom(...others))),
      fc
        .record({ tool: fc.constantFrom("*", `${ns}/*`, call.tool), decision: decisionArb })
        .map((rule): PolicyRule => ({ ...rule, when: { "no.such.path": { exists: true } } })),
    ),
    { maxLength: 8 },
  );
}

describe("decide (properties)", () => {
  it("lets the first matching rule decide, whatever rules follow", () => {
    fc.assert(
      fc.property(fc.array(anyRuleArb, { maxLength: 12 }), fc.array(anyRuleArb, { maxLength: 6 }), callArb, (rules, later, call) => {
        const result = decide(compilePolicy(policy(rules)), call);
        const first = rules.findIndex((rule) => matchesAlone(rule, call));
        if (first < 0) {
          expect(result.rule).toBeUndefined();
          return;
        }
        expect(result.rule).toBe(first);
        expect(result.decision).toBe(rules[first]!.decision);
        const extended = decide(compilePolicy(policy([...rules.slice(0, first + 1), ...later])), call);
        expect(extended).toEqual(result);
      }),
    );
  });

  it("never lets defaults or readOnly bypass a deny rule that matches first", () => {
    fc.assert(
      fc.property(
        callArb.chain((call) =>
          fc.tuple(
            fc.constant(call),
            nonMatchingRulesArb(call),
            fc.constantFrom("*", call.tool, `${call.tool.split("/")[0]!}/*`, call.tool.split("/")[0]!),
            fc.array(
              ruleArb(fc.constant("*")).map((rule): PolicyRule => ({ ...rule, decision: "allow" })),
              { maxLength: 4 },
            ),
          ),
        ),
        ([call, before, denyPattern, after]) => {
          const compiled = compilePolicy(policy([...before, { tool: denyPattern, decision: "deny" }, ...after]));
          for (const readOnly of [true, false]) {
            const result = decide(compiled, { ...call, readOnly });
            expect(result.decision).toBe("deny");
            expect(result.rule).toBe(before.length);
          }
        },
      ),
    );
  });

  it("allows read-only calls and asks for the rest when no rule matches", () => {
    fc.assert(
      fc.property(
        callArb.chain((call) => fc.tuple(fc.constant(call), nonMatchingRulesArb(call))),
        ([call, rules]) => {
          const expected = call.readOnly ? READ_ONLY_DEFAULT : NEEDS_APPROVAL_DEFAULT;
          expect(decide(compilePolicy(policy(rules)), call)).toBe(expected);
          expect(decide(undefined, call)).toBe(expected);
          expect(expected.decision).toBe(call.readOnly ? "allow" : "ask");
        },
      ),
    );
  });

  it("is deterministic and mutates neither the policy nor the call", () => {
    fc.assert(
      fc.property(
        fc.array(anyRuleArb, { maxLength: 12 }),
        fc.record({ tool: toolArb, args: fc.oneof(argsArb, fc.jsonValue()), readOnly: fc.boolean() }),
        (rules, call) => {
          const source = policy(rules);
          const sourceBefore = structuredClone(source);
          const callBefore = structuredClone(call);
          const compiled = compilePolicy(source);
          const first = decide(compiled, call);
          const second = decide(compiled, call);
          expect(second).toEqual(first);
          expect(decide(compilePolicy(source), call)).toEqual(first);
          expect(source).toEqual(sourceBefore);
          expect(call).toEqual(callBefore);
        },
      ),
    );
  });
});

/** Namespace-like names, and tools that may hold several slashes or none. */
const nameArb = fc.stringMatching(/^[a-z_-]{1,6}$/);
const anyToolArb = fc.oneof(
  fc.tuple(nameArb, nameArb).map(([ns, t]) => `${ns}/${t}`),
  fc.string({ unit: fc.constantFrom("a", "b", "/", "_"), maxLength: 8 }),
  fc.string(),
);

describe("tool patterns (properties)", () => {
  it("ns/* and a bare ns match exactly the tools of namespace ns", () => {
    fc.assert(
      fc.property(nameArb, anyToolArb, (ns, tool) => {
        const slash = tool.indexOf("/");
        const inNamespace = slash >= 0 && tool.slice(0, slash) === ns;
        expect(compileToolPattern(`${ns}/*`)(tool)).toBe(inNamespace);
        expect(compileToolPattern(ns)(tool)).toBe(inNamespace);
      }),
    );
  });

  it("* matches every tool", () => {
    fc.assert(
      fc.property(anyToolArb, (tool) => {
        expect(compileToolPattern("*")(tool)).toBe(true);
      }),
    );
  });

  it("agrees with a regex reading of the glob", () => {
    const unit = fc.constantFrom("a", "b", "/", "*");
    fc.assert(
      fc.property(
        fc.string({ unit, minLength: 1, maxLength: 7 }),
        fc.string({ unit: fc.constantFrom("a", "b", "/"), maxLength: 8 }),
        (pattern, tool) => {
          const expanded = pattern.includes("/") || pattern.includes("*") ? pattern : `${pattern}/*`;
          const regex = new RegExp(`^${expanded.split("*").join(".*")}$`, "s");
          expect(compileToolPattern(pattern)(tool)).toBe(regex.test(tool));
        },
      ),
    );
  });
});
