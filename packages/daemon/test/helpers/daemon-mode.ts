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
  "cli-imports",
  "concurrency",
  "console-sign-in",
  "database-reference",
  "delivery-retention",
  "doctor",
  "event-filters",
  "event-search",
  "example-worker",
  "files-tool",
  "http-api",
  "http-conventions",
  "hostile-input",
  "http-narrow-requests",
  "in-process-daemon",
  "inbound-triggers",
  "json-depth-limit",
  "judge-provider",
  "judges",
  "ls-show",
  "mcp-orgs",
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
  "secrets",
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
const SPAWNED_BECAUSE: Readonly<Record<string, string>> = {
  approvals: "kill -9 of the daemon while a call or a question waits, then a restart",
  "config-errors": "what `wardrik daemon` itself prints and exits with when config.yaml is wrong",
  "daemon-file": "daemon.json names the daemon's pid; a killed daemon's file is left behind",
  "daemon-logs": "the command's log output: its format, levels and the lines of SIGTERM and SIGINT",
  events: "kill -9 of the daemon under a following `wardrik events --follow`",
  idempotency: "kill -9 and SIGSTOP of the daemon under a retrying `wardrik ask`",
  "large-messages": "kill -9 of the daemon with the largest messages open",
  "one-daemon": "the SQLite lock between daemon processes, and their exit codes",
  restart: "SIGTERM and kill -9 of the daemon, and its exit code",
  "secret-leaks": "everything the daemon process prints (stdout and stderr, Node's own lines too) is searched for secrets",
  "secrets-everywhere": "everything the daemon process prints (stdout and stderr, Node's own lines too) is searched for secrets",
  shutdown: "how soon the daemon process exits on SIGTERM, and with which code",
  "shutdown-signals": "SIGINT and SIGTERM to the daemon process, twice, early, and its exit codes",
  "slack-approvals": "kill -9 of the daemon with an approval posted to Slack",
  "slack-lost-answer": "kill -9 of the daemon before Slack's answer leaves it",
  "sub-agents": "kill -9 of the daemon during a child turn",
  traces: "kill -9 of the daemon with a parked turn; OpenTelemetry's diagnostics logger is process-wide",
  "typed-output": "kill -9 of the daemon during a repair round",
  "webhook-crash": "kill -9 of the daemon between a delivery and its record",
  // These start no daemon (or only make projects): nothing to choose.
  "cli-usage": "starts no daemon",
  init: "starts no daemon",
  "schema-command": "starts no daemon",
};

for (const name of Object.keys(SPAWNED_BECAUSE)) {
  if (IN_PROCESS.has(name)) throw new Error(`daemon-mode.ts lists ${name} both in process and spawned.`);
}

/** How the daemons of the file now running start, unless a test asks otherwise. */
export function daemonModeOfThisFile(): DaemonMode {
  if (process.env.WARDRIK_TEST_DAEMON === "spawned") return "spawned";
  const path = expect.getState().testPath;
  if (path === undefined) return "spawned";
  const name = basename(path).replace(/\.test\.ts$/, "");
  return IN_PROCESS.has(name) ? "in-process" : "spawned";
}
