/**
 * config.yaml with a secret that cannot be decrypted: the daemon starts with
 * everything that does not need it. What needs it is put aside, each part
 * on its own, with why (the key, and the secret by name, never a value):
 * - a model or an MCP server stays in the config, marked unusable, so that
 *   an agent whose model it is, or whose tools it serves, says why;
 * - Slack, a webhook subscriber or the telemetry exporter is turned off.
 * A key outside those parts (the org, the database) cannot do without it: the
 * start fails with the reason.
 */
import type { ProjectConfig } from "./types.js";
import { formatKeyPath, type KeyPath } from "./yaml-source.js";

/** A reference, at `path`, to secret `name`, which cannot be decrypted because of `error`. */
export interface UnreadableUse {
  name: string;
  path: KeyPath;
  error: string;
}

/** The part of config.yaml a key belongs to, as a key path: `models.NAME`, `mcp.NAME`, `slack`, `subscribers[N]`, `telemetry`. */
export function partOf(path: KeyPath): string | undefined {
  const [top, second] = path;
  // An org's own server: server names are unique across config.yaml, so it is `mcp.NAME` too.
  if (top === "orgs" && path[2] === "mcp" && path[3] !== undefined) return formatKeyPath(["mcp", path[3]]);
  if ((top === "models" || top === "mcp" || top === "subscribers") && second !== undefined) return formatKeyPath([top, second]);
  if (top === "slack" || top === "telemetry") return top;
  return undefined;
}

/** Why `use` stops its part. */
export function unreadableReason(use: UnreadableUse): string {
  return `config.yaml ${formatKeyPath(use.path)}: ${use.error}`;
}

/**
 * `config` without what needs an unreadable secret: models and MCP servers
 * marked in `unusable` (part -> why), Slack, subscribers and telemetry taken
 * out. `off` hears each part turned off or marked, with why.
 */
export function setAside(config: ProjectConfig, uses: readonly UnreadableUse[], off: (part: string, why: string) => void): ProjectConfig {
  if (uses.length === 0) return config;
  const unusable: Record<string, string> = { ...config.unusable };
  const dropped = new Set<string>();
  for (const use of uses) {
    const part = partOf(use.path);
    if (part === undefined) throw new Error(unreadableReason(use));
    if (part in unusable || dropped.has(part)) continue;
    if (part.startsWith("models.") || part.startsWith("mcp.")) unusable[part] = unreadableReason(use);
    else dropped.add(part);
    off(part, unreadableReason(use));
  }
  const out: ProjectConfig = { ...config, unusable };
  if (dropped.has("slack")) delete out.slack;
  if (dropped.has("telemetry")) delete out.telemetry;
  out.subscribers = (config.subscribers ?? []).filter((_, i) => !dropped.has(formatKeyPath(["subscribers", i])));
  return out;
}
