/**
 * The one layer between a zod schema and a file a person wrote: validate the
 * parsed value, and turn its problems (in the order of the file) into one
 * ConfigError that names the file, the line and the key of each. Schemas say what is allowed; this file
 * says how a problem reads, the same way for config.yaml, agents and policies.
 *
 * Messages never quote a value: config values may be resolved secrets. A
 * schema that wants the value in its message (a policy's decision) says so
 * in its own error function.
 */
import type { z } from "zod";
import { closeNames } from "./did-you-mean.js";
import { ConfigError, formatKeyPath, type KeyPath, type Source } from "./yaml-source.js";

type Issue = z.core.$ZodIssue;
type RawIssue = z.core.$ZodRawIssue;

/** The message of a union whose branches should explain the problem instead. */
const ASK_BRANCHES = "\u0000union";

/** Validates `src.value` against `schema`; throws a ConfigError that lists every problem, in the order of the file. */
export function readWithSchema<S extends z.ZodType>(schema: S, src: Source): z.output<S> {
  const result = schema.safeParse(src.value, { error: messageFor, reportInput: true });
  if (result.success) return result.data;
  throw toConfigError(result.error.issues, src);
}

interface Problem {
  path: KeyPath;
  detail: string;
  /** Which line tells the reader where to look: the key's, the value's, or the parent key's (a missing key). */
  at: "key" | "value" | "parent";
  unknownKey?: true;
}

function toConfigError(issues: readonly Issue[], src: Source): ConfigError {
  const problems = issues.flatMap((issue) => explain(issue, []));
  // A key missing next to an unknown one is most likely that key misspelt: report the spelling.
  const misspelt = new Set(problems.filter((p) => p.unknownKey).map((p) => formatKeyPath(p.path.slice(0, -1))));
  const found = problems
    .filter((problem) => !(problem.at === "parent" && misspelt.has(formatKeyPath(problem.path.slice(0, -1)))))
    .map((problem) => ({ problem, line: lineOf(problem, src) }))
    // Stable: problems on one line keep zod's order (the order of the schema's keys).
    .sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
  // One problem per key: a value that fails two checks is told the first.
  const seen = new Set<string>();
  const listed = found.filter(({ problem }) => {
    const id = formatKeyPath(problem.path);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
  const [first, ...more] =
    listed.length > 0 ? listed : [{ problem: { path: [], detail: "is not valid", at: "key" as const }, line: undefined }];
  const entry = ({ problem, line }: { problem: Problem; line: number | undefined }) => ({
    line,
    key: problem.path.length === 0 ? undefined : formatKeyPath(problem.path),
    detail: problem.detail,
  });
  return new ConfigError({ file: src.file, ...entry(first!), more: more.map(entry) });
}

function lineOf(problem: Problem, src: Source): number | undefined {
  if (problem.at === "parent") return src.lineOf(problem.path.slice(0, -1));
  if (problem.at === "value" && problem.path.length > 0) return src.valueLineOf(problem.path);
  return src.lineOf(problem.path);
}

function subject(path: KeyPath): string {
  return path.length === 0 ? "the top level" : formatKeyPath(path);
}

function explain(issue: Issue, base: KeyPath): Problem[] {
  const path: KeyPath = [...base, ...issue.path.map((segment) => (typeof segment === "symbol" ? String(segment) : segment))];
  switch (issue.code) {
    case "invalid_union": {
      if (issue.message !== ASK_BRANCHES) return [{ path, detail: `${subject(path)} ${issue.message}`, at: "key" }];
      const branch = closestBranch(issue.errors);
      if (branch !== undefined) return branch.flatMap((inner) => explain(inner, path));
      const expected = [...new Set(issue.errors.flat().map(expectedOf))];
      return [{ path, detail: `${subject(path)} must be ${expected.join(" or ")}`, at: "value" }];
    }
    case "invalid_key": {
      const name = String(path[path.length - 1]);
      const problem = issue.issues[0]?.message ?? "is not allowed";
      return [{ path, detail: `name ${JSON.stringify(name)} in ${subject(path.slice(0, -1))} ${problem}`, at: "key" }];
    }
    case "unrecognized_keys": {
      // messageFor wrote the allowed keys into the message: a misspelt one is named.
      const allowed = /\(allowed: (.*)\)$/.exec(issue.message)?.[1]?.split(", ") ?? [];
      return issue.keys.map((key) => {
        const close = closeNames(key, allowed);
        const guess = close.length
          ? `is not allowed: did you mean ${close.map((k) => `"${k}"`).join(" or ")}? (allowed: ${allowed.join(", ")})`
          : "";
        return {
          path: [...path, key],
          detail: `key "${formatKeyPath([...path, key])}" ${guess || issue.message}`,
          at: "key",
          unknownKey: true,
        };
      });
    }
    default:
      if (isMissing(issue)) return [{ path, detail: `key "${formatKeyPath(path)}" ${issue.message}`, at: "parent" }];
      return [{ path, detail: `${subject(path)} ${issue.message}`, at: issue.code === "invalid_type" ? "value" : "key" }];
  }
}

function isMissing(issue: Issue): boolean {
  if (issue.code === "custom") return issue.params?.missing === true;
  return (issue.code === "invalid_type" || issue.code === "invalid_value") && issue.input === undefined && "input" in issue;
}

/**
 * The branch that got furthest: not one that failed on the value's own type
 * (a list where a map was wanted), and of those the one with fewest problems.
 */
function closestBranch(branches: readonly (readonly Issue[])[]): readonly Issue[] | undefined {
  const wrongType = (issue: Issue) => issue.path.length === 0 && (issue.code === "invalid_type" || issue.code === "invalid_value");
  const near = branches.filter((issues) => !issues.some(wrongType));
  return near.sort((a, b) => a.length - b.length)[0];
}

function expectedOf(issue: Issue): string {
  if (issue.code === "invalid_type") return TYPE_NAMES[issue.expected] ?? issue.expected;
  if (issue.code === "invalid_value") return issue.values.map(String).join(" or ");
  return "something else";
}

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
  array: "a list",
  tuple: "a list",
  object: "a mapping",
  record: "a mapping",
  null: "empty",
};

/** zod's error map for every read: short suffixes that follow the key path. */
function messageFor(issue: RawIssue): string | undefined {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "is required";
      return `must be ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
    case "invalid_value": {
      const values = issue.values.map(String);
      if (issue.input === undefined) return values.length > 1 ? `is required (one of ${values.join(", ")})` : "is required";
      return values.length === 1 ? `must be ${values[0]}` : `must be one of ${values.join(", ")}`;
    }
    case "unrecognized_keys":
      return `is not allowed (allowed: ${allowedKeys(issue.inst).join(", ")})`;
    case "invalid_union":
      return ASK_BRANCHES;
    case "too_small":
      if (issue.origin === "string" && Number(issue.minimum) === 1) return "must not be empty";
      if (issue.origin === "array" || issue.origin === "set")
        return `must have at least ${issue.minimum} item${issue.minimum === 1 ? "" : "s"}`;
      return `must be ${issue.inclusive ? "at least" : "more than"} ${issue.minimum}`;
    case "too_big":
      if (issue.origin === "string") return `must be at most ${issue.maximum} characters`;
      if (issue.origin === "array" || issue.origin === "set") return `must have at most ${issue.maximum} items`;
      return `must be ${issue.inclusive ? "at most" : "less than"} ${issue.maximum}`;
    case "invalid_format":
      return "is not in the expected form";
    default:
      return undefined;
  }
}

function allowedKeys(inst: unknown): string[] {
  const shape = (inst as { _zod?: { def?: { shape?: Record<string, unknown> } } } | undefined)?._zod?.def?.shape;
  return shape === undefined ? [] : Object.keys(shape);
}
