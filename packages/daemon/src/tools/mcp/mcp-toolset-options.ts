import type { Logger } from "../../log/logger.js";
import type { SecretRedactor } from "../../secrets/redactor.js";
import type { McpOAuth } from "./oauth/mcp-oauth.js";

/** A value config.yaml resolved into a server's entry; `name`: the stored secret it came from. */
export interface ServerCredential {
  value: string;
  name?: string;
}

export interface McpToolsetOptions {
  /** config.yaml's org, whose credentials the server carries: it, and the orgs of the server's `orgs:`, may use it. Default "default". */
  homeOrg?: string;
  /** Why the server cannot run at all (a secret it is given cannot be decrypted): it is never started, and says this. */
  unusable?: string;
  log?: Logger;
  /** Known secret values (the daemon's redactor); the server's own credentials from config.yaml are added to it. */
  redactor?: SecretRedactor;
  /** Every `${env:}` and `${secret:}` value config.yaml gives the server (command, args, env, headers): blanked wherever it shows. */
  credentials?: readonly ServerCredential[];
  /** The daemon's OAuth grants: a remote server without an Authorization header then logs in per org. */
  oauth?: McpOAuth;
  /** Working directory of stdio servers (the project directory), so relative paths in `args` work. */
  cwd?: string;
  /** Milliseconds for each of the initialize handshake and the first `tools/list`; a server slower than this is down. Default 30 s. */
  startTimeoutMs?: number;
  /** How deep a server's answer to a call may nest (config.yaml `limits.json_depth`); a deeper one fails the call. Default 64. */
  jsonDepth?: number;
  /** Milliseconds for a re-list after `notifications/tools/list_changed`. Default 30 s. */
  listTimeoutMs?: number;
  /**
   * Restart backoff after a failed start or a crash: the first retry waits
   * `initialMs`, each further failure doubles it, up to `maxMs`. Default 1 s to 60 s.
   */
  backoff?: { initialMs?: number; maxMs?: number };
  /** A server that stayed up this long before crashing restarts with the initial backoff again. Default 60 s. */
  stableAfterMs?: number;
  /** Milliseconds a server keeps running after its last agent released it (another agent often follows). Default 5 s. */
  stopGraceMs?: number;
  /**
   * An agent that has neither listed nor called for this long no longer
   * holds the server (a fallback for agents that went to sleep without a
   * `release`). Default 15 minutes, the default agent idle_timeout.
   */
  holderIdleMs?: number;
}

export const MCP_DEFAULTS = {
  startTimeoutMs: 30_000,
  listTimeoutMs: 30_000,
  backoffInitialMs: 1_000,
  backoffMaxMs: 60_000,
  stableAfterMs: 60_000,
  stopGraceMs: 5_000,
  holderIdleMs: 900_000,
} as const;
