import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { Option, type Command } from "commander";
import { CONFIG_FILE } from "../../config/config-file.js";
import { loadDaemon } from "../load-daemon.js";
import { findProjectDir } from "../project-dir.js";
import { DEFAULT_LOG_THRESHOLD, LOG_LEVEL_ENV, LOG_THRESHOLDS, type LogThreshold } from "../../log/log-level.js";
import { examples, UsageError } from "../output.js";

export function registerDaemon(program: Command): void {
  examples(
    program
      .command("daemon")
      .description("run the daemon for the project in the current directory (foreground; Ctrl-C stops it)")
      .option("--port <port>", "listen on this port instead of config.yaml's", (v) => parsePort(v))
      .option("--node <name>", "this daemon's name in a cluster (default: host name and port)")
      .addOption(new Option("--log-level <level>", "the least severe log lines to write").choices(LOG_THRESHOLDS).env(LOG_LEVEL_ENV)),
    "wardrik daemon",
    "wardrik daemon --port 0 --log-level debug",
    "wardrik daemon --port 7374 --node node-b   # a second node on the same PostgreSQL database",
  ).action(async (opts: { port?: number; node?: string; logLevel?: LogThreshold }) => {
    checkProjectDir(process.cwd());
    // Loaded here so other commands start without the daemon's dependencies.
    const { daemon: code, codeCache } = await loadDaemon();
    const { startDaemon, runUntilSignalled, createLogger, routeProcessOutput } = code;
    // Everything the daemon says goes through its logger: JSON lines unless stderr is a terminal.
    const log = createLogger({ level: opts.logLevel ?? DEFAULT_LOG_THRESHOLD });
    routeProcessOutput(log);
    if (codeCache !== undefined) log("debug", "daemon code loaded", { file: codeCache.file, code_cache: codeCache.used });
    // A signal while the daemon starts (its API may already answer) stops it once started; a second one at once.
    let early: NodeJS.Signals | undefined;
    const onEarly = (signal: NodeJS.Signals): void => {
      if (early) process.exit(130);
      early = signal;
      log("info", `${signal} while starting: stopping once started (send it again to exit at once)`);
    };
    process.on("SIGINT", onEarly);
    process.on("SIGTERM", onEarly);
    const daemon = await startDaemon(process.cwd(), {
      log,
      ...(opts.port !== undefined ? { port: opts.port } : {}),
      ...(opts.node !== undefined ? { node: opts.node } : {}),
    }).catch((error: unknown) => {
      log("error", error instanceof Error ? error.message : String(error));
      process.exit(1);
    });
    // The run's handlers are added before the early ones go: with no listener left even for a moment, Node drops its
    // signal watcher, and a signal already received but not yet dispatched (a Ctrl-C just as the daemon listens) is lost.
    const stopped = runUntilSignalled(() => daemon.close(), log, early);
    process.off("SIGINT", onEarly);
    process.off("SIGTERM", onEarly);
    // Everything durable is closed (or the deadline passed); do not wait for stray timers or sockets.
    process.exit(await stopped);
  });
}

/** The daemon serves the project in the current directory: anywhere else, say where a project is or how to make one. */
function checkProjectDir(cwd: string): void {
  if (existsSync(join(cwd, CONFIG_FILE)) || existsSync(join(cwd, ".wardrik"))) return;
  const above = findProjectDir(dirname(cwd));
  if (above !== undefined && above !== cwd)
    throw new Error(`wardrik daemon runs in a project directory: ${cwd} is not one, but ${above} is (cd ${above} first).`);
  throw new Error(
    `wardrik daemon runs in a project directory, and ${cwd} is not one (it has no ${CONFIG_FILE}). Make one with wardrik init DIR, then run wardrik daemon inside it.`,
  );
}

function parsePort(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`--port must be a port number, got ${v}`);
  return n;
}
