import { readdirSync, readFileSync } from "node:fs";
import { basename, extname, join } from "node:path";
import { readWithSchema } from "../config/read-with-schema.js";
import { ConfigError, parseYamlSource } from "../config/yaml-source.js";
import { policySchema } from "./policy-schema.js";
import type { Policy } from "./types.js";

const ERROR_MARK = Symbol.for("wardrik.PolicyLoadError");

/** A policy file that cannot be used. The message reads `policies/careful.yaml:7: rules[1].decision must be ...`. */
export class PolicyLoadError extends ConfigError {
  override readonly name = "PolicyLoadError";
  readonly [ERROR_MARK] = true;

  /** Works across bundles and realms, unlike `instanceof`. */
  static override isInstance(error: unknown): error is PolicyLoadError {
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
  try {
    const src = parseYamlSource(text, file);
    if (src.value === null || src.value === undefined) {
      throw new ConfigError({ file, line: 1, detail: "the file is empty; a policy is a map of description, budget, rules" });
    }
    const { description, budget, rules } = readWithSchema(policySchema, src);
    return {
      name: policyName(file),
      ...(description === undefined ? {} : { description }),
      ...(budget === undefined ? {} : { budget }),
      rules: rules.map((rule, i) => ({ ...rule, source: `${file}:${src.lineOf(["rules", i]) ?? 1}` })),
    };
  } catch (error) {
    if (!ConfigError.isInstance(error) || PolicyLoadError.isInstance(error)) throw error;
    throw new PolicyLoadError({ file: error.file, line: error.line, key: error.key, detail: error.detail });
  }
}

function policyName(file: string): string {
  return basename(file, extname(file));
}
