import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentSummary } from "@wardrik/protocol";
import { WardrikError } from "@wardrik/protocol/errors";
import { ADMIN_TOKEN_FILE } from "../admin-token-file.js";
import { DAEMON_FILE, localUrl, readLiveDaemonFile } from "../daemon-file.js";
import { daemonClient, type DaemonClient, type RequestOptions } from "./daemon-client.js";
import { err } from "./output.js";
import { findProjectDir } from "./project-dir.js";
import { readProjectAddress, type AddressRead, type ProjectAddress } from "./project-address.js";

/** The project read before the command's action ran (prepareProject). */
let prepared: { cwd: string; dir: string | undefined; read: AddressRead | undefined } | undefined;

/**
 * Reads the project around `cwd` before a command's action runs (main.ts
 * calls it): asynchronously, so config.yaml's modules load only when the
 * CLI's memo of it is out of date. Never throws; findProject reports what it met.
 */
export async function prepareProject(cwd = process.cwd()): Promise<void> {
  const dir = findProjectDir(cwd);
  prepared = { cwd, dir, read: dir === undefined ? undefined : await readProjectAddress(dir) };
}

/** The project around `cwd` and the settings the CLI reads from its config.yaml, if there is one. */
export function findProject(cwd = process.cwd()): { dir: string; settings: ProjectAddress } | undefined {
  if (prepared?.cwd !== cwd) throw new Error(`The CLI did not read the project around ${cwd} before the command ran (prepareProject).`);
  const { dir, read } = prepared;
  if (dir === undefined || read === undefined) return undefined;
  if (read.error !== undefined) throw read.error;
  if (read.warning !== undefined) {
    err(read.warning);
    delete read.warning;
  }
  return { dir, settings: read.address! };
}

/**
 * Inside a project: the daemon's address (daemonUrl) and the local admin
 * token, unless WARDRIK_TOKEN says otherwise. Elsewhere: WARDRIK_URL and WARDRIK_TOKEN.
 */
export function connect(cwd = process.cwd(), project = findProject(cwd)): DaemonClient {
  if (project) {
    const { dir, settings } = project;
    const tokenPath = join(dir, ADMIN_TOKEN_FILE);
    const token = process.env.WARDRIK_TOKEN;
    if (!token && !existsSync(tokenPath)) {
      throw new WardrikError("unauthorized", `${tokenPath} does not exist yet; start the daemon once (wardrik daemon) to create it.`);
    }
    return daemonClient(daemonUrl(dir, settings), token || readFileSync(tokenPath, "utf8").trim());
  }
  if (!process.env.WARDRIK_URL || !process.env.WARDRIK_TOKEN) {
    throw new WardrikError(
      "bad_request",
      "Not inside a Wardrik project (no config.yaml here or above), and WARDRIK_URL / WARDRIK_TOKEN are not set.",
    );
  }
  return daemonClient(process.env.WARDRIK_URL, process.env.WARDRIK_TOKEN);
}

/**
 * The one place that decides where the CLI finds a project's daemon, in this order:
 *   1. WARDRIK_URL, when set (the user said so);
 *   2. the URL the running daemon wrote to .wardrik/daemon.json, while its pid
 *      lives (it may listen elsewhere than config.yaml says: `wardrik daemon --port N`);
 *   3. config.yaml's `listen` (read through the CLI's memo, .wardrik/cli-settings.json,
 *      which only caches config.yaml and never outranks daemon.json).
 * Says on stderr when the chosen one differs from the running daemon's.
 */
export function daemonUrl(dir: string, settings: ProjectAddress, warn: (message: string) => void = err): string {
  const configured = localUrl(settings.listen.host, settings.listen.port);
  const running = readLiveDaemonFile(dir)?.url;
  const given = process.env.WARDRIK_URL;
  if (given) {
    if (running !== undefined && running !== given.replace(/\/+$/, ""))
      warn(`note: WARDRIK_URL is ${given}, but this project's daemon runs at ${running} (${DAEMON_FILE}); using WARDRIK_URL.`);
    return given;
  }
  if (running === undefined) return configured;
  if (running !== configured)
    warn(`note: this project's daemon runs at ${running} (${DAEMON_FILE}), not at config.yaml's ${configured}; using ${running}.`);
  return running;
}

/**
 * What a refused admin token most likely means when this project's daemon is
 * not running (no live .wardrik/daemon.json) and the CLI went to config.yaml's
 * address: another Wardrik daemon answers there, one that does not know this
 * project's token. `err` itself otherwise (WARDRIK_URL or WARDRIK_TOKEN set,
 * not a 401, or this project's daemon runs).
 */
export function explainRefusedToken(err: unknown): unknown {
  if (!WardrikError.isInstance(err) || err.status !== 401 || process.env.WARDRIK_URL || process.env.WARDRIK_TOKEN) return err;
  const dir = prepared?.dir;
  const address = prepared?.read?.address;
  if (dir === undefined || address === undefined || readLiveDaemonFile(dir) !== undefined) return err;
  const url = localUrl(address.listen.host, address.listen.port);
  return new WardrikError(
    "unauthorized",
    `The daemon at ${url} does not accept this project's admin token (${ADMIN_TOKEN_FILE}). This project's daemon is not running ` +
      `(no live ${DAEMON_FILE}), and another Wardrik daemon answers at ${url}, config.yaml's listen address. ` +
      `Start this project's daemon with \`wardrik daemon\` in ${dir}, after stopping the other one or giving this project another listen: address.`,
    { status: 401 },
  );
}

/** An agent, found by `name` or `org/name`, and a client that acts in its org. */
export interface AgentRef {
  agent: AgentSummary;
  client: DaemonClient;
  /** How to name the agent in commands printed for the user (`org/name` when it was given so). */
  ref: string;
}

/**
 * Finds an agent by `name` (the token's org) or `org/name`. Another org is
 * reached with the admin token through the `Wardrik-Org` header; an org token
 * is refused there by the daemon with a message that says so.
 */
export async function agentByName(client: DaemonClient, ref: string, options: RequestOptions = {}): Promise<AgentRef> {
  const slash = ref.indexOf("/");
  const org = slash >= 0 ? ref.slice(0, slash) : undefined;
  const name = slash >= 0 ? ref.slice(slash + 1) : ref;
  if (org === "" || name === "" || name.includes("/")) {
    throw new WardrikError("bad_request", `"${ref}" is not an agent name: write NAME, or ORG/NAME for an agent of another org.`);
  }
  const scoped = client.inOrg(org);
  const agent = await scoped.findAgent(name, options);
  if (!agent) {
    const known = (await scoped.listAgents()).map((a) => (org !== undefined ? `${org}/${a.name}` : a.name));
    const where = org !== undefined ? ` in org ${org}` : "";
    throw new WardrikError(
      "not_found",
      `No agent ${ref}.${known.length ? ` Agents${where}: ${known.join(", ")}.` : org !== undefined ? ` Org ${org} has no agents.` : " There are no agents; add a file to agents/ and run wardrik reload."}`,
    );
  }
  return { agent, client: scoped, ref };
}
