/**
 * `wardrik doctor`: every check a newcomer would otherwise make by hand,
 * each with what to fix. The project's files are read here, as the daemon
 * would read them with this shell's environment; the running daemon (if one
 * answers) is asked about itself and its workers through the HTTP API.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { loadScriptFile } from "@wardrik/testing/scripted-model";
import type { AgentSummary, AgentTools } from "@wardrik/protocol";
import { ADMIN_TOKEN_FILE } from "../admin-token.js";
import { CONFIG_FILE, ConfigError, loadConfig, type ProjectConfig } from "../config/index.js";
import { SECRET_STAND_IN } from "../config/references.js";
import { silentLogger } from "../log/logger.js";
import { loadProjectPolicies } from "../policy/load-project-policies.js";
import { ProjectAgents, type ProjectPolicies } from "../project-agents.js";
import { SecretRedactor } from "../secrets/redactor.js";
import { checkDatabase } from "../store/database-check.js";
import { VERSION } from "../version.js";
import { daemonUrl, findProjectDir } from "./connect.js";
import { DaemonClient } from "./daemon-client.js";
import { readProjectSettings } from "./project-settings.js";

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

export interface DoctorReport {
  dir?: string;
  checks: Check[];
}

const ok = (name: string, detail: string): Check => ({ name, level: "ok", detail });
const fail = (name: string, detail: string, fix?: string): Check => ({ name, level: "fail", detail, ...(fix ? { fix } : {}) });
const warn = (name: string, detail: string, fix?: string): Check => ({ name, level: "warn", detail, ...(fix ? { fix } : {}) });

export async function runDoctor(cwd: string): Promise<DoctorReport> {
  const dir = findProjectDir(cwd);
  if (dir === undefined)
    return { checks: [fail("project", `no Wardrik project in ${cwd} or above it (no ${CONFIG_FILE})`, "wardrik init DIR makes one")] };
  const checks: Check[] = [];
  const daemon = await checkDaemon(dir, checks);
  // The secrets the daemon holds (when it answers): a ${secret:NAME} that names none is found here.
  const secretNames = daemon ? await daemon.listSecrets().catch(() => undefined) : undefined;
  const secret = (name: string): string | undefined =>
    secretNames === undefined || secretNames.includes(name) ? SECRET_STAND_IN : undefined;

  const config = checkConfig(dir, secret, checks);
  const policies = loadProjectPolicies(dir, silentLogger);
  checkPolicies(policies, checks);
  checkScripts(dir, checks);
  const readable = config ? checkAgents(dir, config, policies, secret, checks) : undefined;
  if (!config) checks.push(warn("agents/", "not checked: config.yaml has problems (agents name its models and policies)"));
  if (!existsSync(join(dir, ADMIN_TOKEN_FILE)))
    checks.push(
      fail(
        ADMIN_TOKEN_FILE,
        "missing: the CLI and the example worker sign in with it",
        "start the daemon once (wardrik daemon) to create it",
      ),
    );

  if (daemon) {
    checks.push(ok("database", "in use by the running daemon"));
    await checkDaemonAgents(daemon, readable, checks);
  } else if (config) {
    const db = await checkDatabase(config.database);
    checks.push(db.ok ? ok("database", db.detail) : fail("database", db.detail, db.fix));
  }
  return { dir, checks };
}

/** config.yaml, read as the daemon reads it (this shell's environment; secrets it cannot see stand in). */
function checkConfig(dir: string, secret: (name: string) => string | undefined, checks: Check[]): ProjectConfig | undefined {
  try {
    const config = loadConfig(dir, { env: process.env, secret });
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
function checkAgents(
  dir: string,
  config: ProjectConfig,
  policies: ProjectPolicies,
  secret: (name: string) => string | undefined,
  checks: Check[],
): Set<string> {
  const project = new ProjectAgents({ dir, config, env: process.env, policies, redactor: new SecretRedactor() });
  const { agents, modelWarnings } = project.read(secret);
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

/** The daemon this project's CLI would talk to: whether it answers, to this project's admin token. */
async function checkDaemon(dir: string, checks: Check[]): Promise<DaemonClient | undefined> {
  const notes: string[] = [];
  let url: string;
  try {
    url = daemonUrl(
      dir,
      readProjectSettings(dir, () => undefined),
      (m) => notes.push(m.replace(/^note: /, "")),
    );
  } catch {
    checks.push(fail("daemon", "not checked: config.yaml's org, listen or database cannot be read"));
    return undefined;
  }
  const token = process.env.WARDRIK_TOKEN ?? readToken(dir);
  const note = notes.length ? `\n${notes.join("\n")}` : "";
  let version: string;
  try {
    const res = await fetch(`${url}/v1/health`, { signal: AbortSignal.timeout(3000) });
    version = ((await res.json()) as { version?: string }).version ?? "unknown";
  } catch {
    checks.push(fail("daemon", `no daemon answers at ${url}${note}`, `start it: wardrik daemon (in ${dir})`));
    return undefined;
  }
  if (token === undefined) {
    checks.push(
      fail(
        "daemon",
        `a daemon answers at ${url}, but there is no token to sign in with`,
        "start the daemon once to create .wardrik/admin-token",
      ),
    );
    return undefined;
  }
  const client = new DaemonClient(url, token);
  try {
    await client.listAgents();
  } catch (err) {
    checks.push(
      fail(
        "daemon",
        `the daemon at ${url} refused this project's token: ${(err as Error).message}${note}`,
        "is it another project's daemon on the same port? Give this project its own listen: port, or stop the other one",
      ),
    );
    return undefined;
  }
  const same = version === VERSION ? "" : `; this CLI is ${VERSION}`;
  checks.push(
    (same ? warn : ok)("daemon", `answers at ${url} (version ${version}${same})${note}`, same ? "run the same version of both" : undefined),
  );
  return client;
}

function readToken(dir: string): string | undefined {
  try {
    return readFileSync(join(dir, ADMIN_TOKEN_FILE), "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}

/** What the running daemon says about its agents: unreadable ones, and worker tools no worker serves. */
async function checkDaemonAgents(daemon: DaemonClient, readable: Set<string> | undefined, checks: Check[]): Promise<void> {
  const agents = await daemon.listAgents();
  for (const a of agents.filter((x) => x.status === "unreadable")) {
    if (readable?.has(a.name))
      checks.push(warn(`agent ${a.name}`, "unreadable in the running daemon, but its file reads fine now", "wardrik reload"));
  }
  const missing: string[] = [];
  for (const a of agents.filter((x) => x.status !== "unreadable")) {
    const tools = await daemon.agentTools(a.id).catch(() => undefined);
    for (const u of workerPatternsWithoutWorker(tools)) missing.push(`${a.name}: ${u}`);
  }
  if (missing.length > 0)
    checks.push(
      fail(
        "workers",
        `no connected worker serves what these agents' tool patterns name:\n${missing.join("\n")}`,
        "start the worker that registers these tools (in a project made by wardrik init: npm run worker)",
      ),
    );
  else if (agents.some((a: AgentSummary) => a.status !== "unreadable")) checks.push(ok("workers", "every worker tool pattern is served"));
}

function workerPatternsWithoutWorker(tools: AgentTools | undefined): string[] {
  return (tools?.unmatched ?? []).filter((u) => u.expected && u.pattern.startsWith("workers")).map((u) => u.pattern);
}
