import type { Condition } from "./types.js";

/**
 * `when` conditions on a call's arguments.
 *
 * Keys are dotted paths into the arguments (`customer.address.country`,
 * `items.0.sku`). Every key must hold, and every operator of a key's
 * condition must hold. A path that does not resolve only satisfies `ne` and
 * `exists: false`; every other operator is false on it.
 */
export type ArgsPredicate = (args: unknown) => boolean;

export const CONDITION_OPERATORS = ["eq", "ne", "gt", "gte", "lt", "lte", "in", "matches", "exists"] as const;
export type ConditionOperator = (typeof CONDITION_OPERATORS)[number];

/**
 * Thrown when a condition cannot be compiled. `operator` is unset when the
 * problem is the path or the condition as a whole; `problem` reads after the
 * key, so a loader can prefix its own location: `rules[0].when.amount.gt must be a number`.
 */
export class ConditionError extends Error {
  override readonly name = "ConditionError";
  constructor(
    readonly path: string,
    readonly operator: string | undefined,
    readonly problem: string,
  ) {
    super(`${operator === undefined ? path : `${path}.${operator}`} ${problem}`);
  }
}

const EXPECTED_OPERATORS = `expected one of ${CONDITION_OPERATORS.join(", ")}`;

/** A sentinel rather than `undefined`, so a missing path is told apart without allocating. */
const MISSING: unique symbol = Symbol("missing");

const hasOwn = Object.hasOwn;

/** Splits a dotted path; array indexes are plain segments (`items.0.sku`). */
export function parsePath(path: string): string[] {
  const segments = path.split(".");
  if (segments.some((segment) => segment === "")) {
    throw new ConditionError(path, undefined, "is not a valid argument path (a dotted path has an empty segment)");
  }
  return segments;
}

/** Own properties only: `constructor` or `__proto__` must not resolve on plain arguments. */
function resolvePath(args: unknown, segments: readonly string[]): unknown {
  let current: unknown = args;
  for (let i = 0; i < segments.length; i++) {
    if (current === null || typeof current !== "object") return MISSING;
    const segment = segments[i]!;
    if (!hasOwn(current, segment)) return MISSING;
    current = (current as Record<string, unknown>)[segment];
  }
  return current === undefined ? MISSING : current;
}

/** Compiles a whole `when` map into one predicate. No `when`, or an empty one, always holds. */
export function compileWhen(when: Record<string, Condition> | undefined): ArgsPredicate {
  if (when === undefined) return alwaysTrue;
  const checks = Object.entries(when).map(([path, condition]) => compileCondition(path, condition));
  if (checks.length === 0) return alwaysTrue;
  if (checks.length === 1) return checks[0]!;
  return (args) => {
    for (let i = 0; i < checks.length; i++) if (!checks[i]!(args)) return false;
    return true;
  };
}

/** Compiles one key's condition: regexes and `in` sets are built here, never per call. */
export function compileCondition(path: string, condition: Condition): ArgsPredicate {
  const segments = parsePath(path);
  if (condition === null || typeof condition !== "object" || Array.isArray(condition)) {
    throw new ConditionError(path, undefined, "must be a condition object, e.g. { eq: 1 }");
  }
  const tests: Array<(value: unknown) => boolean> = [];
  for (const [operator, operand] of Object.entries(condition)) {
    if (operand === undefined) continue;
    tests.push(compileOperator(path, operator, operand));
  }
  if (tests.length === 0) {
    throw new ConditionError(path, undefined, `has no operator (${EXPECTED_OPERATORS})`);
  }
  if (tests.length === 1) {
    const only = tests[0]!;
    return (args) => only(resolvePath(args, segments));
  }
  return (args) => {
    const value = resolvePath(args, segments);
    for (let i = 0; i < tests.length; i++) if (!tests[i]!(value)) return false;
    return true;
  };
}

function compileOperator(path: string, operator: string, operand: unknown): (value: unknown) => boolean {
  const fail = (problem: string) => new ConditionError(path, operator, problem);
  switch (operator) {
    case "eq": {
      const equals = compileEquals(operand);
      return (value) => value !== MISSING && equals(value);
    }
    case "ne": {
      const equals = compileEquals(operand);
      return (value) => value === MISSING || !equals(value);
    }
    // Ordering compares numbers only: "100" is not greater than 5. Arguments
    // come from a model, and coercing strings would make a typed schema
    // and the policy disagree about what was sent.
    case "gt": {
      const bound = requireNumber(operand, fail);
      return (value) => typeof value === "number" && value > bound;
    }
    case "gte": {
      const bound = requireNumber(operand, fail);
      return (value) => typeof value === "number" && value >= bound;
    }
    case "lt": {
      const bound = requireNumber(operand, fail);
      return (value) => typeof value === "number" && value < bound;
    }
    case "lte": {
      const bound = requireNumber(operand, fail);
      return (value) => typeof value === "number" && value <= bound;
    }
    case "in": {
      if (!Array.isArray(operand)) throw fail("must be a list");
      if (operand.every(isPrimitive)) {
        const set = new Set<unknown>(operand);
        return (value) => value !== MISSING && set.has(value);
      }
      const options = operand.map(compileEquals);
      return (value) => value !== MISSING && options.some((equals) => equals(value));
    }
    case "matches": {
      if (typeof operand !== "string") throw fail("must be a string (a regular expression)");
      let regex: RegExp;
      try {
        // No flags: a `g` or `y` regex keeps lastIndex between calls, which would make decide() impure.
        regex = new RegExp(operand);
      } catch (error) {
        throw fail(`is not a valid regular expression: ${(error as Error).message}`);
      }
      return (value) => typeof value === "string" && regex.test(value);
    }
    case "exists": {
      if (typeof operand !== "boolean") throw fail("must be true or false");
      return operand ? (value) => value !== MISSING : (value) => value === MISSING;
    }
    default:
      throw fail(`is not an operator (${EXPECTED_OPERATORS})`);
  }
}

function requireNumber(operand: unknown, fail: (problem: string) => ConditionError): number {
  if (typeof operand !== "number" || !Number.isFinite(operand)) throw fail("must be a number");
  return operand;
}

function isPrimitive(value: unknown): boolean {
  return value === null || (typeof value !== "object" && typeof value !== "function");
}

function compileEquals(expected: unknown): (value: unknown) => boolean {
  if (isPrimitive(expected)) return (value) => value === expected;
  return (value) => jsonEqual(value, expected);
}

/** Structural equality over JSON-like values: arrays by position, objects by own keys. */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  const aIsArray = Array.isArray(a);
  if (aIsArray !== Array.isArray(b)) return false;
  if (aIsArray) {
    const left = a as unknown[];
    const right = b as unknown[];
    if (left.length !== right.length) return false;
    for (let i = 0; i < left.length; i++) if (!jsonEqual(left[i], right[i])) return false;
    return true;
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  for (const key of keys) {
    if (!hasOwn(right, key) || !jsonEqual(left[key], right[key])) return false;
  }
  return true;
}

function alwaysTrue(): boolean {
  return true;
}
