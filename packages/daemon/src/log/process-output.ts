import type { Logger } from "./logger.js";

/**
 * Sends what Node itself would print on stderr (process warnings, a crash's
 * stack) through the logger, so a daemon's stderr holds log lines only.
 * For the `wardrik daemon` process, not for a daemon embedded in another program.
 */
export function routeProcessOutput(log: Logger): void {
  // Node's own listener prints warnings as plain text; the log line replaces it.
  process.removeAllListeners("warning");
  process.on("warning", (warning) => log("warn", warning.message, { warning: warning.name }));
  process.on("uncaughtException", (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    log("error", `the daemon stopped on an unexpected error: ${message}`, { err: error });
    process.exit(1);
  });
}
