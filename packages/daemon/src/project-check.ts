/**
 * The project's files as the daemon will read them (config.yaml, policies,
 * scripts, agent files with the models and policies they name), and its
 * database read without changing it: the part of `wardrik doctor` that needs
 * no daemon. Read with this shell's environment.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { loadScriptFile } from "@wardrik/testing/scripted-model";
import { CONFIG_FILE, ConfigError, loadConfig, type ProjectConfig } from "./config/index.js";
import type { ReferenceSources } from "./config/references.js";
import { silentLogger } from "./log/logger.js";
import { loadProjectPolicies } from "./policy/load-project-policies.js";
import { ProjectAgents, type ProjectPolicies } from "./project-agents.js";
import { SecretRedactor } from "./secrets/redactor.js";
import { checkDatabase } from "./store/database-check.js";

export type CheckLevel = "ok" | "warn" | "fail";

export interface Check {
  /** What was checked: `config.yaml`, `agents/helper.md`, `daemon`, ... */
  name: string;
  level: CheckLevel;
  /** What was found; several lines for several problems. */
  detail: string;
  /** What to do about it. */
  fix?: string;
}

export const ok = (name: string, detail: string): Check => ({ name, level: "ok", detail });
export const fail = (name: string, detail: string, fix?: string): Check => ({ name, level: "fail", detail, ...(fix ? { fix } : {}) });
export const warn = (name: string, detail: string, fix?: string): Check => ({ name, level: "warn", detail, ...(fix ? { fix } : {}) });

/**
 * Whether a `${secret:NAME}` exists: `secret` gives a stand-in value or
 * undefined; `unreadableSecret` says why a stored one cannot be decrypted.
 */
export type ProjectSecrets = Pick<ReferenceSources, "secret" | "unreadableSecret">;

/**
 * Every file check, with the secrets `secrets` says exist. Returns the config
 * (when it reads) and the names of the agents whose files are usable.
 */
export function checkProjectFiles(
  dir: string,
  secrets: ProjectSecrets,
  checks: Check[],
): { config?: ProjectConfig; readable?: Set<string> } {
  const config = checkConfig(dir, secrets, checks);
  const policies = loadProjectPolicies(dir, silentLogger);
  checkPolicies(policies, checks);
  checkScripts(dir, checks);
  if (!config) {
    checks.push(warn("agents/", "not checked: config.yaml has problems (agents name its models and policies)"));
    return {};
  }
  return { config, readable: checkAgents(dir, config, policies, secrets, checks) };
}

/** The database config.yaml names, opened read-only. */
export async function checkProjectDatabase(config: ProjectConfig): Promise<Check> {
  const db = await checkDatabase(config.database);
  return db.ok ? ok("database", db.detail) : fail("database", db.detail, db.fix);
}

/** config.yaml, read as the daemon reads it (this shell's environment; secrets it cannot see stand in). */
function checkConfig(dir: string, secrets: ProjectSecrets, checks: Check[]): ProjectConfig | undefined {
  try {
    const config = loadConfig(dir, { env: process.env, ...secrets });
    checks.push(
      ok(
        CONFIG_FILE,
        `org ${config.org}, listen ${config.listen.host}:${config.listen.port}, ${Object.keys(config.models).length} model(s)`,
      ),
    );
    return config;
  } catch (err) {
    if (!ConfigError.isInstance(err)) throw err;
    checks.push(
      fail(CONFIG_FILE, err.message, "fix these lines (wardrik schema config lists every key); the daemon reads config.yaml at start"),
    );
    return undefined;
  }
}

function checkPolicies(policies: ProjectPolicies, checks: Check[]): void {
  let good = 0;
  for (const [name, p] of policies) {
    if ("error" in p)
      checks.push(fail(`policies/${name}.yaml`, p.error, "fix the file, then restart the daemon (policies are read at start)"));
    else good++;
  }
  if (good > 0 || policies.size === 0) checks.push(ok("policies/", `${good} polic${good === 1 ? "y" : "ies"} read`));
}

function checkScripts(dir: string, checks: Check[]): void {
  let files: string[] = [];
  try {
    files = readdirSync(join(dir, "scripts")).filter((f) => f.endsWith(".yaml"));
  } catch {
    return; // no scripts/: nothing to check
  }
  let good = 0;
  for (const file of files) {
    try {
      loadScriptFile(join(dir, "scripts", file));
      good++;
    } catch (err) {
      checks.push(fail(`scripts/${file}`, (err as Error).message, "fix the file, then wardrik reload"));
    }
  }
  if (good > 0) checks.push(ok("scripts/", `${good} script${good === 1 ? "" : "s"} read`));
}

/** Every agent file, checked against the policies and models it names; returns the names of the usable ones. */
function checkAgents(dir: string, config: ProjectConfig, policies: ProjectPolicies, secrets: ProjectSecrets, checks: Check[]): Set<string> {
  const project = new ProjectAgents({ dir, config, env: process.env, policies, redactor: new SecretRedactor() });
  const { agents, modelWarnings } = project.read(secrets);
  const readable = new Set<string>();
  for (const a of agents) {
    if (a.error !== undefined) checks.push(fail(a.file, a.error, "fix the file, then wardrik reload"));
    else readable.add(a.name);
  }
  checks.push(ok("agents/", `${readable.size} of ${agents.length} agent file(s) usable`));
  for (const w of modelWarnings)
    checks.push(
      fail(
        `model of ${w.agent}`,
        `${w.reason} (in this shell's environment; the daemon reads its own)`,
        "set the key where the daemon runs, then restart it",
      ),
    );
  return readable;
}
