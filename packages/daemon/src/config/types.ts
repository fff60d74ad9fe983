/** Parsed, validated project configuration and agent definitions. */
import type { AgentFrontmatter } from "./agent-schema.js";
import type { ConfigFile } from "./config-schema.js";
import type { OutputSchema } from "./output-schema.js";

export type { ClusterSettings, SlackSettings, SubscriberEntry, TelemetrySettings } from "./integration-schemas.js";
export type { Trigger } from "./trigger-schema.js";

export interface ModelEntry {
  provider: "openai" | "openai-chat" | "anthropic" | "openai-compatible" | "script";
  /** The provider's model id (for `script`, the script's name). */
  model: string;
  base_url?: string;
  /** Already resolved from `${env:}` / `${secret:}`; never logged. */
  api_key?: string;
  headers?: Record<string, string>;
  context_window?: number;
  price?: { input: number; output: number; cached_input?: number };
}

/** Either `command` (stdio) or `url` (streamable HTTP) is set. */
export interface McpServerEntry {
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  url?: string;
  headers?: Record<string, string>;
  /** OAuth settings of a streamable-HTTP server; without them a server that asks for a login gets a dynamically registered client. */
  oauth?: { client_id?: string; client_secret?: string; scope?: string; redirect_url?: string };
  /** Orgs besides config.yaml's own whose agents may use the server; "*" for every org. */
  orgs?: string[];
}

/** config.yaml after loading: defaults filled, references resolved. */
export interface ProjectConfig extends Omit<ConfigFile, "models" | "mcp" | "orgs"> {
  /** Absolute path of the project directory. */
  dir: string;
  /** `sqlite:PATH` (absolute after loading) or a postgres URL. */
  database: string;
  models: Record<string, ModelEntry>;
  mcp: Record<string, McpServerEntry>;
  /** Other orgs' own parts: their MCP servers (each org's alone, with that org's secrets). */
  orgs?: Record<string, { mcp: Record<string, McpServerEntry> }>;
  /** Seconds before a tool call times out. */
  tool_timeout: number;
  /**
   * Models and MCP servers that cannot be used, keyed `models.NAME` or
   * `mcp.NAME`, with why: a secret they name cannot be decrypted.
   */
  unusable?: Record<string, string>;
  /** Seconds calls wait for workers after a start or takeover (and for a lost worker's answer). */
  worker_grace: number;
}

/** An agent file (or an API-made agent) after loading. */
export interface AgentDefinition extends Omit<AgentFrontmatter, "title" | "output"> {
  name: string;
  /** The JSON Schema the final reply must fit (a path in the file is read when the file is). */
  output?: OutputSchema | undefined;
  /** Display name; the agent's name when the file sets none. */
  title: string;
  /** The Markdown body: the system prompt. */
  instructions: string;
}

export const AGENT_DEFAULTS = {
  max_iterations: 20,
  timeout: 600,
  retries: 2,
  idle_timeout: 900,
  max_depth: 3,
} as const;

/** The tool patterns an agent's tools come from: its `tools`, and agents/NAME for each agent it may call. */
export function toolPatternsOf(def: Pick<AgentDefinition, "tools" | "agents">): string[] {
  const agents = def.agents ?? [];
  return agents.length === 0 ? def.tools : [...def.tools, ...agents.map((name) => `agents/${name}`)];
}

export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 7373;
