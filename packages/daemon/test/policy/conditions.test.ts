import { describe, expect, it } from "vitest";
import { ConditionError, compileCondition, compileWhen, type Condition } from "../../src/policy/index.js";

function holds(path: string, condition: Condition, args: unknown): boolean {
  return compileCondition(path, condition)(args);
}

describe("condition operators", () => {
  it("eq compares scalars strictly and structures deeply", () => {
    expect(holds("country", { eq: "DE" }, { country: "DE" })).toBe(true);
    expect(holds("country", { eq: "DE" }, { country: "de" })).toBe(false);
    expect(holds("n", { eq: 1 }, { n: "1" })).toBe(false);
    expect(holds("flag", { eq: null }, { flag: null })).toBe(true);
    expect(holds("tags", { eq: ["a", "b"] }, { tags: ["a", "b"] })).toBe(true);
    expect(holds("tags", { eq: ["a", "b"] }, { tags: ["b", "a"] })).toBe(false);
    expect(holds("o", { eq: { a: 1, b: [2] } }, { o: { b: [2], a: 1 } })).toBe(true);
    expect(holds("o", { eq: { a: 1 } }, { o: { a: 1, b: 2 } })).toBe(false);
  });

  it("ne holds on a missing path", () => {
    expect(holds("country", { ne: "DE" }, { country: "FR" })).toBe(true);
    expect(holds("country", { ne: "DE" }, { country: "DE" })).toBe(false);
    expect(holds("country", { ne: "DE" }, {})).toBe(true);
  });

  it("gt, gte, lt and lte compare numbers only", () => {
    expect(holds("amount", { gt: 100 }, { amount: 101 })).toBe(true);
    expect(holds("amount", { gt: 100 }, { amount: 100 })).toBe(false);
    expect(holds("amount", { gte: 100 }, { amount: 100 })).toBe(true);
    expect(holds("amount", { lt: 100 }, { amount: 99.5 })).toBe(true);
    expect(holds("amount", { lt: 100 }, { amount: 100 })).toBe(false);
    expect(holds("amount", { lte: 100 }, { amount: 100 })).toBe(true);
    expect(holds("amount", { gt: 100 }, { amount: "500" })).toBe(false);
    expect(holds("amount", { lt: 100 }, { amount: null })).toBe(false);
    expect(holds("amount", { lt: 100 }, {})).toBe(false);
  });

  it("in matches one of a list", () => {
    expect(holds("country", { in: ["DE", "FR"] }, { country: "FR" })).toBe(true);
    expect(holds("country", { in: ["DE", "FR"] }, { country: "US" })).toBe(false);
    expect(holds("country", { in: ["DE", "FR"] }, {})).toBe(false);
    expect(holds("n", { in: [1, 2] }, { n: "1" })).toBe(false);
    expect(holds("pair", { in: [[1, 2], "x"] }, { pair: [1, 2] })).toBe(true);
  });

  it("matches tests strings against a regex", () => {
    expect(holds("email", { matches: "@example\\.com$" }, { email: "a@example.com" })).toBe(true);
    expect(holds("email", { matches: "@example\\.com$" }, { email: "a@example.org" })).toBe(false);
    expect(holds("code", { matches: "^1" }, { code: 123 })).toBe(false);
    expect(holds("email", { matches: "." }, {})).toBe(false);
  });

  it("exists tells present from missing, null counting as present", () => {
    expect(holds("reason", { exists: true }, { reason: "x" })).toBe(true);
    expect(holds("reason", { exists: true }, { reason: null })).toBe(true);
    expect(holds("reason", { exists: true }, {})).toBe(false);
    expect(holds("reason", { exists: false }, {})).toBe(true);
    expect(holds("reason", { exists: false }, { reason: 0 })).toBe(false);
  });

  it("requires every operator of a condition", () => {
    const band: Condition = { gte: 10, lt: 20 };
    expect(holds("n", band, { n: 10 })).toBe(true);
    expect(holds("n", band, { n: 20 })).toBe(false);
    expect(holds("n", band, { n: 9 })).toBe(false);
  });
});

describe("argument paths", () => {
  const args = {
    customer: { address: { country: "DE" } },
    items: [{ sku: "A-1" }, { sku: "B-2" }],
  };

  it("follows dotted paths and array indexes", () => {
    expect(holds("customer.address.country", { eq: "DE" }, args)).toBe(true);
    expect(holds("items.1.sku", { eq: "B-2" }, args)).toBe(true);
    expect(holds("items.2.sku", { exists: false }, args)).toBe(true);
    expect(holds("customer.address.country.code", { exists: false }, args)).toBe(true);
  });

  it("treats non-object arguments as having no paths", () => {
    for (const value of [undefined, null, 3, "text"]) {
      expect(holds("a", { exists: false }, value)).toBe(true);
      expect(holds("a", { eq: 3 }, value)).toBe(false);
    }
  });

  it("does not resolve inherited properties", () => {
    expect(holds("constructor", { exists: false }, {})).toBe(true);
    expect(holds("a.toString", { exists: false }, { a: {} })).toBe(true);
  });
});

describe("compileWhen", () => {
  it("requires every key", () => {
    const when = compileWhen({ country: { eq: "DE" }, amount: { gt: 100 } });
    expect(when({ country: "DE", amount: 150 })).toBe(true);
    expect(when({ country: "DE", amount: 50 })).toBe(false);
    expect(when({ country: "FR", amount: 150 })).toBe(false);
  });

  it("holds when there are no conditions", () => {
    expect(compileWhen(undefined)({})).toBe(true);
    expect(compileWhen({})(undefined)).toBe(true);
  });
});

describe("condition errors", () => {
  function problem(path: string, condition: unknown): string {
    try {
      compileCondition(path, condition as Condition);
    } catch (error) {
      expect(error).toBeInstanceOf(ConditionError);
      return (error as Error).message;
    }
    throw new Error("expected a ConditionError");
  }

  it("names the path and the operator", () => {
    expect(problem("email", { matches: "(" })).toMatch(/^email\.matches is not a valid regular expression: /);
    expect(problem("amount", { gt: "100" })).toBe("amount.gt must be a number");
    expect(problem("country", { in: "DE" })).toBe("country.in must be a list");
    expect(problem("x", { exists: "yes" })).toBe("x.exists must be true or false");
    expect(problem("x", { like: "a" })).toMatch(/^x\.like is not an operator \(expected one of eq, ne, /);
    expect(problem("x", {})).toMatch(/^x has no operator/);
    expect(problem("a..b", { eq: 1 })).toMatch(/^a\.\.b is not a valid argument path/);
  });
});
