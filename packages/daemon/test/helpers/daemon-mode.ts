/**
 * Which end-to-end files run their daemons inside the test process
 * (in-process-daemon.ts) and which spawn `wardrik daemon`, in one place.
 *
 * A file runs in process when what it checks happens inside one daemon:
 * its API, stored state, events, turns, workers and MCP servers (still real
 * processes), CLI commands (still real processes) against its URL, a stop
 * and start on the same directory. A file spawns when it needs the daemon's
 * process: a signal or kill -9 to it, its exit code or stdout, what the
 * `wardrik daemon` command itself does (flags, start-up messages, the
 * daemon.json of its pid), or something of the process that one test
 * process cannot give each daemon (the modules it loaded, process-wide
 * state). A file not listed here spawns: that is always safe.
 *
 * WARDRIK_TEST_DAEMON=spawned spawns every daemon (to compare, or to rule
 * the mode out when a file fails); a test may also ask for one mode
 * (createProject({ process: "spawned" })).
 */
import { basename } from "node:path";
import { expect } from "vitest";

export type DaemonMode = "in-process" | "spawned";

/** Files (names in test/e2e) whose daemons run in the test process. */
const IN_PROCESS: ReadonlySet<string> = new Set([
  "agent-paging",
  "agent-policy-view",
  "agents-mcp-http",
  "agents-mcp-stdio",
  "approve-edited-args",
  "ask",
  "ask-progress",
  "ask-streaming",
  "ask-tool-lines",
  "cancel-clear",
  "cli-conventions",
  "concurrency",
  "console-sign-in",
  "database-reference",
  "delivery-retention",
  "doctor",
  "event-filters",
  "event-search",
  "files-tool",
  "http-api",
  "http-conventions",
  "http-narrow-requests",
  "inbound-triggers",
  "json-depth-limit",
  "judge-provider",
  "judges",
  "ls-show",
  "metrics",
  "model-fallback",
  "no-worker",
  "openai-compatible",
  "openapi-document",
  "org-limits",
  "org-names",
  "reload",
  "schedule-triggers",
  "secret-offline",
  "secret-rotate",
  "secret-unreadable",
  "slack-events",
  "slack-streaming",
  "sse-batching",
  "time-machine",
  "tool-timeout",
  "tools-command",
  "turn-failures",
  "turn-list",
  "webhook-deliveries",
  "worker-reconnect",
  "worker-tool-conflicts",
]);

/**
 * Files that spawn, with the reason. Listed so a review sees each choice;
 * an unlisted file spawns as well.
 */
export const SPAWNED_BECAUSE: Readonly<Record<string, string>> = {};

/** How the daemons of the file now running start, unless a test asks otherwise. */
export function daemonModeOfThisFile(): DaemonMode {
  if (process.env.WARDRIK_TEST_DAEMON === "spawned") return "spawned";
  const path = expect.getState().testPath;
  if (path === undefined) return "spawned";
  return IN_PROCESS.has(basename(path).replace(/\.test\.ts$/, "")) ? "in-process" : "spawned";
}
