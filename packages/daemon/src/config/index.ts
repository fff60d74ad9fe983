export { DEFAULT_LEASE_SECONDS } from "./integration-schemas.js";
export { AGENT_DEFAULTS, DEFAULT_HOST, DEFAULT_PORT } from "./types.js";
export type {
  AgentDefinition,
  ClusterSettings,
  McpServerEntry,
  ModelEntry,
  ProjectConfig,
  SlackSettings,
  SubscriberEntry,
  TelemetrySettings,
  Trigger,
} from "./types.js";
export { CONFIG_FILE } from "./config-file.js";
export { loadConfig, parseConfig } from "./load-config.js";
export type { LoadConfigOptions } from "./load-config.js";
export { loadAgentsDir, parseAgentFile, validateAgentDefinition } from "./load-agent-file.js";
export type { AgentFileResult } from "./load-agent-file.js";
export { ConfigError, Source, formatKeyPath, parseYamlSource, plainSource } from "./yaml-source.js";
export type { KeyPath, YamlSourceOptions } from "./yaml-source.js";
