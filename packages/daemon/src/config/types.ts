/** Parsed, validated project configuration. */

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

export interface McpServerEntry {
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  url?: string;
  headers?: Record<string, string>;
}

export interface SubscriberEntry {
  url: string;
  secret?: string;
  types?: string[];
}

export interface ProjectConfig {
  /** Absolute path of the project directory. */
  dir: string;
  org: string;
  /** host:port */
  listen: { host: string; port: number };
  /** `sqlite:PATH` (absolute after loading) or a postgres URL. */
  database: string;
  model?: string;
  models: Record<string, ModelEntry>;
  mcp: Record<string, McpServerEntry>;
  policy?: string;
  subscribers: SubscriberEntry[];
}

export interface AgentDefinition {
  name: string;
  description: string;
  title: string;
  model?: string;
  tools: string[];
  policy?: string;
  max_iterations: number;
  /** Seconds. */
  timeout: number;
  retries: number;
  idle_timeout: number | "infinity";
  budget?: number;
  context_window?: number;
  /** The Markdown body: the system prompt. */
  instructions: string;
}

export const AGENT_DEFAULTS = {
  max_iterations: 20,
  timeout: 600,
  retries: 2,
  idle_timeout: 900,
} as const;

export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 7373;
