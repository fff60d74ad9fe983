/**
 * `wardrik doctor`: every check a newcomer would otherwise make by hand,
 * each with what to fix. The project's files are read as the daemon would
 * read them (project-check.ts); the running daemon, if one answers, is asked
 * about itself and its workers through the HTTP API.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentSummary, AgentTools } from "@wardrik/protocol";
import { ADMIN_TOKEN_FILE } from "../admin-token-file.js";
import { CONFIG_FILE } from "../config/index.js";
import { SECRET_STAND_IN } from "../config/references.js";
import { checkProjectDatabase, checkProjectFiles, fail, ok, warn, type Check, type ProjectSecrets } from "../project-check.js";
import { VERSION } from "../version.js";
import { daemonUrl } from "./connect.js";
import { findProjectDir } from "./project-dir.js";
import { daemonClient, type DaemonClient } from "./daemon-client.js";
import { readProjectSettings } from "./project-settings.js";

export type { Check };

export interface DoctorReport {
  dir?: string;
  checks: Check[];
}

export async function runDoctor(cwd: string): Promise<DoctorReport> {
  const dir = findProjectDir(cwd);
  if (dir === undefined)
    return { checks: [fail("project", `no Wardrik project in ${cwd} or above it (no ${CONFIG_FILE})`, "wardrik init DIR makes one")] };
  const checks: Check[] = [];
  // Asked first (its secrets tell which ${secret:NAME} exist), reported after the files.
  const daemonChecks: Check[] = [];
  const daemon = await checkDaemon(dir, daemonChecks);
  // The secrets the daemon holds (when it answers): a ${secret:NAME} that names none is found here.
  const listed = daemon ? await daemon.listSecrets().catch(() => undefined) : undefined;
  const secrets: ProjectSecrets = {
    // Another org's secrets (under orgs:) are not listed for config.yaml's org: taken as set.
    secret: (name, path) => (listed === undefined || path[0] === "orgs" || listed.secrets.includes(name) ? SECRET_STAND_IN : undefined),
    unreadableSecret: (name, path) => (path[0] === "orgs" ? undefined : listed?.unreadable.find((u) => u.name === name)?.error),
  };

  const { config, readable } = checkProjectFiles(dir, secrets, checks);
  if (!existsSync(join(dir, ADMIN_TOKEN_FILE)))
    checks.push(
      fail(
        ADMIN_TOKEN_FILE,
        "missing: the CLI and the example worker sign in with it",
        "start the daemon once (wardrik daemon) to create it",
      ),
    );

  checks.push(...daemonChecks);
  if (daemon) {
    checks.push(ok("database", "in use by the running daemon"));
    await checkDaemonAgents(daemon, readable, checks);
  } else if (config) {
    checks.push(await checkProjectDatabase(config));
  }
  return { dir, checks };
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
  const client = daemonClient(url, token);
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
