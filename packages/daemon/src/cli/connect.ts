import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { WardrikClient } from "@wardrik/sdk";
import { WardrikError, type AgentSummary } from "@wardrik/protocol";
import { CONFIG_FILE, loadConfig } from "../config/index.js";
import { ADMIN_TOKEN_FILE } from "../admin-token.js";

/** The project directory that holds `start` (config.yaml or .wardrik/ marks one), if any. */
export function findProjectDir(start: string): string | undefined {
  let dir = resolve(start);
  for (;;) {
    if (existsSync(join(dir, CONFIG_FILE)) || existsSync(join(dir, ADMIN_TOKEN_FILE))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * Inside a project: the address from config.yaml and the local admin token.
 * Elsewhere: WARDRIK_URL and WARDRIK_TOKEN.
 */
export function connect(cwd = process.cwd()): WardrikClient {
  const dir = findProjectDir(cwd);
  if (dir) {
    // The CLI needs only the address: references it cannot resolve here must not stop it.
    const env = new Proxy(process.env, { get: (target, key) => (typeof key === "string" ? (target[key] ?? "unset") : undefined) });
    const config = loadConfig(dir, { env, secret: () => "unset" });
    const tokenPath = join(dir, ADMIN_TOKEN_FILE);
    if (!existsSync(tokenPath)) {
      throw new WardrikError("unauthorized", `${tokenPath} does not exist yet; start the daemon once (wardrik daemon) to create it.`);
    }
    const host = config.listen.host === "0.0.0.0" || config.listen.host === "::" ? "127.0.0.1" : config.listen.host;
    const url = process.env.WARDRIK_URL ?? `http://${host.includes(":") ? `[${host}]` : host}:${config.listen.port}`;
    return new WardrikClient({ url, token: readFileSync(tokenPath, "utf8").trim() });
  }
  if (!process.env.WARDRIK_URL || !process.env.WARDRIK_TOKEN) {
    throw new WardrikError(
      "bad_request",
      "Not inside a Wardrik project (no config.yaml here or above), and WARDRIK_URL / WARDRIK_TOKEN are not set.",
    );
  }
  return new WardrikClient({ url: process.env.WARDRIK_URL, token: process.env.WARDRIK_TOKEN });
}

/** Finds an agent by `name` or `org/name`. */
export async function agentByName(client: WardrikClient, ref: string): Promise<AgentSummary> {
  const slash = ref.indexOf("/");
  const org = slash >= 0 ? ref.slice(0, slash) : undefined;
  const name = slash >= 0 ? ref.slice(slash + 1) : ref;
  const agent = await client.findAgent(name);
  if (!agent || (org !== undefined && agent.org !== org)) {
    const known = (await client.listAgents()).map((a) => a.name);
    throw new WardrikError(
      "not_found",
      `No agent ${ref}.${known.length ? ` Agents: ${known.join(", ")}.` : " There are no agents; add a file to agents/ and run wardrik reload."}`,
    );
  }
  return agent;
}
