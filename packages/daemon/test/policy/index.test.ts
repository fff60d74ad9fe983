import { expect, it } from "vitest";
import * as policy from "../../src/policy/index.js";

it("pins the policy module's public exports", () => {
  expect(Object.keys(policy).sort()).toEqual([
    "CONDITION_OPERATORS",
    "ConditionError",
    "DECISIONS",
    "NEEDS_APPROVAL_DEFAULT",
    "PolicyLoadError",
    "READ_ONLY_DEFAULT",
    "compileCondition",
    "compilePolicy",
    "compileToolPattern",
    "compileWhen",
    "decide",
    "loadPoliciesDir",
    "parsePolicyFile",
  ]);
});
