import { readdirSync, readFileSync } from "node:fs";
import { basename, extname, join } from "node:path";
import { LineCounter, isAlias, isMap, isScalar, isSeq, parseDocument, type Document, type Node, type YAMLMap } from "yaml";
import { ConditionError, compileCondition } from "./conditions.js";
import { DECISIONS } from "./decide-call.js";
import type { Budget, Condition, Decision, Policy, PolicyRule } from "./types.js";

const POLICY_KEYS = ["description", "budget", "rules"] as const;
const BUDGET_KEYS = ["per_turn_usd", "per_day_usd"] as const;
const RULE_KEYS = ["tool", "when", "decision", "reason"] as const;

const ERROR_MARK = Symbol.for("wardrik.PolicyLoadError");

/** A policy file that cannot be used. The message reads `policies/careful.yaml:7: rules[1].decision must be ...`. */
export class PolicyLoadError extends Error {
  override readonly name = "PolicyLoadError";
  readonly [ERROR_MARK] = true;
  constructor(
    readonly file: string,
    readonly line: number,
    /** The offending key, e.g. `rules[1].decision`; undefined when the file as a whole is wrong. */
    readonly key: string | undefined,
    problem: string,
  ) {
    super(`${file}:${line}: ${key === undefined ? problem : `${key} ${problem}`}`);
  }

  /** Works across bundles and realms, unlike `instanceof`. */
  static isInstance(error: unknown): error is PolicyLoadError {
    return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[ERROR_MARK] === true;
  }
}

/** What loadPoliciesDir() holds for a policy it could not load. */
export interface PolicyLoadFailure {
  error: string;
}

/**
 * Reads `dir/policies/*.yaml` and `*.yml`. Each policy is named after its
 * file; one that fails to load maps to its error so the agents using it can
 * say why. No `policies` directory means no policies.
 */
export function loadPoliciesDir(dir: string): Map<string, Policy | PolicyLoadFailure> {
  let entries: string[];
  try {
    entries = readdirSync(join(dir, "policies"));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return new Map();
    throw error;
  }
  const files = entries.filter((entry) => /\.ya?ml$/.test(entry) && !entry.startsWith(".")).sort();

  const policies = new Map<string, Policy | PolicyLoadFailure>();
  const fileOf = new Map<string, string>();
  for (const entry of files) {
    const file = `policies/${entry}`;
    const name = policyName(file);
    const earlier = fileOf.get(name);
    if (earlier !== undefined) {
      policies.set(name, { error: `${earlier} and ${file} both define policy "${name}"; keep one` });
      continue;
    }
    fileOf.set(name, file);
    let text: string;
    try {
      text = readFileSync(join(dir, file), "utf8");
    } catch (error) {
      policies.set(name, { error: `${file}: cannot be read: ${(error as Error).message}` });
      continue;
    }
    try {
      policies.set(name, parsePolicyFile(text, file));
    } catch (error) {
      if (!PolicyLoadError.isInstance(error)) throw error;
      policies.set(name, { error: error.message });
    }
  }
  return policies;
}

/**
 * Parses and checks one policy file. `file` is how errors and rule sources
 * name it, e.g. `policies/careful.yaml`; the policy is named after its basename.
 * Throws a PolicyLoadError naming the line and key of the first problem.
 */
export function parsePolicyFile(text: string, file: string): Policy {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter });
  const reader = new PolicyReader(file, doc, lineCounter);

  const yamlError = doc.errors[0];
  if (yamlError !== undefined) {
    const line = yamlError.linePos?.[0].line ?? 1;
    // yaml appends " at line L, column C:" and a code excerpt; the line is already in the prefix.
    let problem = `invalid YAML: ${yamlError.message.split(" at line ")[0]}`;
    if (yamlError.code === "BAD_ALIAS") problem += ` (a pattern starting with * must be quoted: tool: "*")`;
    throw new PolicyLoadError(file, line, undefined, problem);
  }
  return reader.readPolicy(policyName(file));
}

function policyName(file: string): string {
  return basename(file, extname(file));
}

class PolicyReader {
  constructor(
    private readonly file: string,
    private readonly doc: Document,
    private readonly lines: LineCounter,
  ) {}

  readPolicy(name: string): Policy {
    const root = this.resolve(this.doc.contents);
    if (root === null) {
      throw new PolicyLoadError(this.file, 1, undefined, `the file is empty; a policy is a map of ${POLICY_KEYS.join(", ")}`);
    }
    if (!isMap(root)) {
      throw new PolicyLoadError(
        this.file,
        this.line(root),
        undefined,
        `a policy must be a map of ${POLICY_KEYS.join(", ")} (got ${describe(root)})`,
      );
    }
    const policy: Policy = { name, rules: [] };
    for (const [key, value] of this.entries(root, "", POLICY_KEYS)) {
      if (key === "description") policy.description = this.string(value, key);
      else if (key === "budget") policy.budget = this.readBudget(value);
      else policy.rules = this.readRules(value);
    }
    return policy;
  }

  private readBudget(node: Node | null): Budget {
    const map = this.map(node, "budget");
    const budget: Budget = {};
    for (const [key, value] of this.entries(map, "budget.", BUDGET_KEYS)) {
      const amount = this.scalar(value);
      if (typeof amount !== "number" || !Number.isFinite(amount) || amount <= 0) {
        this.fail(value ?? map, `budget.${key}`, `must be a positive number of dollars (got ${describe(value)})`);
      }
      budget[key] = amount;
    }
    return budget;
  }

  private readRules(node: Node | null): PolicyRule[] {
    const seq = this.resolve(node);
    if (!isSeq(seq)) this.fail(node, "rules", `must be a list (got ${describe(seq)})`);
    return seq.items.map((item, index) => this.readRule(item as Node | null, `rules[${index}]`));
  }

  private readRule(node: Node | null, at: string): PolicyRule {
    const rule = this.resolve(node);
    if (!isMap(rule)) this.fail(node, at, `must be a map with tool and decision (got ${describe(rule)})`);
    let tool: string | undefined;
    let decision: Decision | undefined;
    let reason: string | undefined;
    let when: Record<string, Condition> | undefined;
    for (const [key, value] of this.entries(rule, `${at}.`, RULE_KEYS)) {
      if (key === "tool") {
        tool = this.string(value, `${at}.tool`);
        if (/\s/.test(tool))
          this.fail(value, `${at}.tool`, `must be a tool pattern like files/* without spaces (got ${JSON.stringify(tool)})`);
      } else if (key === "decision") {
        const raw = this.scalar(value);
        if (typeof raw !== "string" || !(DECISIONS as readonly string[]).includes(raw)) {
          this.fail(value, `${at}.decision`, `must be one of ${DECISIONS.join(", ")} (got ${describe(value)})`);
        }
        decision = raw as Decision;
      } else if (key === "reason") {
        reason = this.string(value, `${at}.reason`);
      } else {
        when = this.readWhen(value, `${at}.when`);
      }
    }
    if (tool === undefined) this.fail(rule, `${at}.tool`, "is required (a tool pattern like files/* or workers/find_order)");
    if (decision === undefined) this.fail(rule, `${at}.decision`, `is required (one of ${DECISIONS.join(", ")})`);
    const result: PolicyRule = { tool, decision, source: `${this.file}:${this.line(rule)}` };
    if (when !== undefined) result.when = when;
    if (reason !== undefined) result.reason = reason;
    return result;
  }

  private readWhen(node: Node | null, at: string): Record<string, Condition> {
    const map = this.map(node, at);
    const when: Record<string, Condition> = {};
    for (const pair of map.items) {
      const keyNode = pair.key as Node | null;
      const path = this.scalar(keyNode);
      if (typeof path !== "string" && typeof path !== "number") {
        this.fail(keyNode ?? map, at, `keys must be argument paths like amount or customer.address.country (got ${describe(keyNode)})`);
      }
      const pathKey = `${at}${formatKey(String(path))}`;
      const valueNode = this.resolve(pair.value as Node | null);
      const operatorNodes = new Map<string, Node | null>();
      let condition: Condition;
      if (isMap(valueNode)) {
        const raw: Record<string, unknown> = {};
        for (const op of valueNode.items) {
          const opKeyNode = op.key as Node | null;
          const operator = this.scalar(opKeyNode);
          if (typeof operator !== "string")
            this.fail(opKeyNode ?? valueNode, pathKey, `has an operator that is not a name (got ${describe(opKeyNode)})`);
          const operandNode = op.value as Node | null;
          operatorNodes.set(operator, opKeyNode);
          raw[operator] = operandNode === null ? null : operandNode.toJS(this.doc);
        }
        condition = raw as Condition;
      } else if (isSeq(valueNode)) {
        this.fail(valueNode, pathKey, "must be a value or a condition map; to match one of several values write { in: [...] }");
      } else {
        // A bare value is shorthand for eq.
        condition = { eq: valueNode === null ? null : this.scalar(valueNode) };
      }
      try {
        compileCondition(String(path), condition);
      } catch (error) {
        if (!(error instanceof ConditionError)) throw error;
        const where = (error.operator === undefined ? undefined : operatorNodes.get(error.operator)) ?? keyNode ?? map;
        const key = error.operator === undefined ? pathKey : `${pathKey}.${error.operator}`;
        this.fail(where, key, error.problem);
      }
      when[String(path)] = condition;
    }
    return when;
  }

  /** The pairs of a map as [key, value], rejecting keys not in `allowed`. */
  private entries<K extends string>(map: YAMLMap, prefix: string, allowed: readonly K[]): Array<[K, Node | null]> {
    return map.items.map((pair) => {
      const keyNode = pair.key as Node | null;
      const key = this.scalar(keyNode);
      if (typeof key !== "string" || !(allowed as readonly string[]).includes(key)) {
        const shown = typeof key === "string" ? `${prefix}${key}` : `${prefix}${describe(keyNode)}`;
        this.fail(keyNode ?? map, shown, `is not a known key (expected ${allowed.join(", ")})`);
      }
      return [key as K, pair.value as Node | null];
    });
  }

  private map(node: Node | null, key: string): YAMLMap {
    const resolved = this.resolve(node);
    if (!isMap(resolved)) this.fail(node, key, `must be a map (got ${describe(resolved)})`);
    return resolved;
  }

  private string(node: Node | null, key: string): string {
    const value = this.scalar(node);
    if (typeof value !== "string" || value.trim() === "") this.fail(node, key, `must be a non-empty string (got ${describe(node)})`);
    return value;
  }

  /** The value of a scalar node; undefined for a map, a list or nothing. */
  private scalar(node: Node | null): unknown {
    const resolved = this.resolve(node);
    if (resolved === null) return null;
    return isScalar(resolved) ? resolved.value : undefined;
  }

  private resolve(node: unknown): Node | null {
    if (node === null || node === undefined) return null;
    if (isAlias(node)) return (node.resolve(this.doc) as Node | undefined) ?? null;
    return node as Node;
  }

  private line(node: Node | null | undefined): number {
    const offset = node?.range?.[0];
    return offset === undefined ? 1 : this.lines.linePos(offset).line;
  }

  private fail(node: Node | null | undefined, key: string, problem: string): never {
    throw new PolicyLoadError(this.file, this.line(node), key, problem);
  }
}

/** `amount` as `.amount`; a dotted path as `["customer.address.country"]` so it reads as one key. */
function formatKey(key: string): string {
  return /^[A-Za-z_$][\w$-]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function describe(node: unknown): string {
  if (node === null || node === undefined) return "nothing";
  if (isMap(node)) return "a map";
  if (isSeq(node)) return "a list";
  const value = isScalar(node) ? node.value : node;
  if (value === null) return "null";
  if (typeof value === "string") return JSON.stringify(value);
  return String(value);
}
