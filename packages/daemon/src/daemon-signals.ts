import type { Logger } from "./log/logger.js";

/** How long a stop may take before the process exits anyway: every turn's state is already durable. */
export const SHUTDOWN_DEADLINE_MS = 4_000;

/**
 * Runs until SIGINT or SIGTERM (or at once, for one `already` received while
 * starting), then closes the daemon; resolves with the exit
 * code. A second signal exits at once, and a close that hangs past the
 * deadline is cut short, so Ctrl-C always ends the daemon within seconds.
 */
export function runUntilSignalled(close: () => Promise<void>, log: Logger, already?: NodeJS.Signals): Promise<number> {
  return new Promise((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (stopping) {
        log("warn", `second ${signal}: exiting at once`);
        process.exit(130);
      }
      stopping = true;
      log("info", `${signal}: shutting down (send it again to exit at once)`);
      const deadline = setTimeout(() => {
        log("warn", `shutdown took longer than ${SHUTDOWN_DEADLINE_MS / 1000} s; exiting anyway (all state is durable)`);
        resolve(1);
      }, SHUTDOWN_DEADLINE_MS);
      close().then(
        () => {
          clearTimeout(deadline);
          resolve(0);
        },
        (err: unknown) => {
          clearTimeout(deadline);
          log("error", "shutdown failed", { err: String(err) });
          resolve(1);
        },
      );
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    // A signal that came while the daemon started.
    if (already) onSignal(already);
  });
}
