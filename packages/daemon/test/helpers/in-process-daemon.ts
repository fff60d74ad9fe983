/**
 * A daemon of the end-to-end helper run inside the test process: the same
 * startDaemon the `wardrik daemon` command runs, on the project's directory,
 * config.yaml and database, listening on real HTTP on 127.0.0.1, so the
 * API, event streams, workers over WebSocket and CLI processes reach it as
 * they reach a spawned one. What it spares is the start of a Node process
 * and the daemon's imports (about 0.6 s of CPU per daemon on the test
 * machine); what needs a process (signals, kill -9, exit codes, the
 * command's own start-up) stays spawned (daemon-mode.ts says which file
 * runs how).
 *
 * Its log lines are those the command writes on stderr: the same logger
 * (JSON lines, the same threshold, the same redaction inside startDaemon),
 * written into the project's buffer. A daemon left running is closed when
 * the file ends (spawn-daemon.ts registers the project's dispose), and each
 * close checks that the daemon left no listener on the process.
 */
import { createLogger, resolveLogThreshold, type Logger } from "../../src/log/index.js";
import type * as DaemonModule from "../../src/daemon.js";
import { SHUTDOWN_DEADLINE_MS } from "../../src/daemon-signals.js";
import { CleanupFailure } from "./file-cleanups.js";

export interface InProcessStart {
  dir: string;
  /** The environment the daemon reads (as a spawned daemon's would be). */
  env: NodeJS.ProcessEnv;
  /** `wardrik daemon --port N`; otherwise config.yaml's `listen:`. */
  port?: number;
  /** Where the log lines go (the project's "stderr"). */
  write(line: string): void;
}

export interface InProcessDaemon {
  url: string;
  /**
   * Throws once an error escaped while the daemon ran (an uncaught exception or
   * unhandled rejection in the test process), as a spawned daemon's process
   * would have ended on it: the test fails at its next request, not only the run.
   */
  assertAlive(): void;
  /** Closes the daemon; `code` is what `wardrik daemon` would exit with (1 when the close outlasted its deadline or failed). */
  close(): Promise<{ code: number; ms: number }>;
}

/**
 * The process events a daemon must not leave a listener on: what `wardrik daemon` itself handles. Not `exit`: test
 * helpers add theirs while a daemon runs (a bundle's temp dir); in-process-daemon.test.ts checks every event.
 */
const PROCESS_EVENTS = ["SIGINT", "SIGTERM", "SIGHUP", "uncaughtException", "unhandledRejection", "warning"] as const;

function listenerCounts(): number[] {
  return PROCESS_EVENTS.map((e) => process.listenerCount(e));
}

/** The daemons running in this process, told of an error that escaped (what would end a spawned daemon's process). */
const running = new Set<(err: unknown) => void>();
// Watching only: vitest's own handlers still report the error and fail the run. Added once, with the module.
process.on("uncaughtExceptionMonitor", (err) => running.forEach((crashed) => crashed(err)));
process.on("unhandledRejection", (reason) => running.forEach((crashed) => crashed(reason)));

/** Loaded on first use: a file whose daemons are all spawned does not import the daemon's sources. */
let loading: Promise<typeof DaemonModule> | undefined;

/**
 * Starts the daemon; rejects as `wardrik daemon` exits, with the reason
 * logged first (the command logs a failed start as one error line).
 * An address already in use rejects with an error whose code is EADDRINUSE.
 */
export async function startInProcessDaemon(o: InProcessStart): Promise<InProcessDaemon> {
  const { startDaemon } = await (loading ??= import("../../src/daemon.js"));
  const log: Logger = createLogger({ level: resolveLogThreshold(undefined, o.env), stream: { write: o.write } });
  const before = listenerCounts();
  let daemon: DaemonModule.Daemon;
  try {
    daemon = await startDaemon(o.dir, { log, env: o.env, ...(o.port !== undefined ? { port: o.port } : {}) });
  } catch (error) {
    log("error", error instanceof Error ? error.message : String(error));
    throw error;
  }
  let crash: unknown;
  const crashed = (err: unknown) => void (crash ??= err);
  running.add(crashed);
  const assertAlive = () => {
    if (crash !== undefined)
      throw new Error(`The daemon in the test process crashed (an error escaped while it ran): ${String(crash)}`, { cause: crash });
  };
  return {
    url: daemon.url,
    assertAlive,
    async close() {
      running.delete(crashed);
      const t0 = Date.now();
      let code = 0;
      await daemon.close().catch((err: unknown) => {
        log("error", "shutdown failed", { err: String(err) });
        code = 1;
      });
      const ms = Date.now() - t0;
      // The close ended the clients' connections, but the test process's own fetch pool learns of it only when the event
      // loop next polls; a start right after (much of it synchronous on SQLite) would get a request onto a dead keep-alive
      // connection. A spawned daemon's exit leaves at least a process start for that. Two turns of the loop do it here.
      for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
      // The command exits anyway once its deadline passed; here the close is awaited whole, so nothing outlives it.
      if (ms > SHUTDOWN_DEADLINE_MS) code = 1;
      const after = listenerCounts();
      const left = PROCESS_EVENTS.filter((_, i) => after[i]! > before[i]!);
      if (left.length > 0) throw new CleanupFailure(`The in-process daemon left listeners on the process: ${left.join(", ")}`);
      assertAlive();
      return { code, ms };
    },
  };
}
