import type { Script } from "@wardrik/testing/scripted-model";
import { ADMIN_TOKEN_FILE, ensureAdminToken } from "./admin-token.js";
import type { ProjectConfig } from "./config/index.js";
import { createLogger, resolveLogThreshold, type Logger } from "./log/index.js";
import { systemClock, type Clock } from "./ids.js";
import type { Runtime } from "./runtime/runtime.js";
import { SecretRedactor } from "./secrets/redactor.js";
import { openProject } from "./open-project.js";
import type { Store } from "./store/store.js";
import type { WorkerGateway } from "./tools/workers/worker-gateway.js";
import type { DaemonTracing } from "./telemetry/start-tracing.js";
import { assembleDaemon } from "./daemon-parts.js";
import { daemonServices, type Listening } from "./daemon-services.js";
import { startServices } from "./service-list.js";

export { ADMIN_TOKEN_FILE, ensureAdminToken };

export type { Logger };

export interface DaemonOptions {
  /** Overrides config.yaml `listen` (0 picks a free port). */
  port?: number;
  host?: string;
  /** Default: JSON lines on stderr at WARDRIK_LOG_LEVEL (info when unset). */
  log?: Logger;
  /**
   * The redactor the daemon fills with every known secret value. Pass one to
   * also blank lines written around the daemon (give the same one to
   * createLogger's `redact`); by default the daemon makes its own.
   */
  redactor?: SecretRedactor;
  toolTimeoutMs?: number;
  scripts?: Record<string, Script>;
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  synchronous?: "NORMAL" | "FULL";
  /** This node's name in a cluster (`wardrik daemon --node NAME`); default the host name and port. */
  node?: string;
}

export interface Daemon {
  url: string;
  /** This daemon's node name. */
  node: string;
  config: ProjectConfig;
  store: Store;
  runtime: Runtime;
  workers: WorkerGateway;
  close(): Promise<void>;
}

export async function startDaemon(dir: string, options: DaemonOptions = {}): Promise<Daemon> {
  const env = options.env ?? process.env;
  // Every known secret value, blanked from logs, tool outcomes, MCP messages and events.
  const redactor = options.redactor ?? new SecretRedactor();
  const rawLog = options.log ?? createLogger({ level: resolveLogThreshold(undefined, env) });
  // While traces are exported, a line about a turn (its `run`) names the turn's trace; one that names its own span keeps it.
  let traceFields: DaemonTracing["logFields"] = () => undefined;
  const log: Logger = (level, msg, fields) => {
    const trace = traceFields(fields);
    const all = trace ? { ...trace, ...fields } : fields;
    rawLog(level, redactor.redact(msg), all && redactor.redactValue(all));
  };
  const opened = await openProject(dir, {
    ...{ env, redactor, log, node: options.node },
    synchronous: options.synchronous ?? "NORMAL",
  });
  const { scripts, toolTimeoutMs, node, port } = options;
  const clock = options.clock ?? systemClock;
  const parts = await assembleDaemon(opened, { dir, env, redactor, log, clock, scripts, toolTimeoutMs, node, port }).catch(
    async (err: unknown) => {
      // Nothing runs yet: give back the database (and its lock) before saying why.
      await opened.db.close();
      opened.lock?.release();
      throw err;
    },
  );
  traceFields = parts.observed.tracing.logFields;
  const { config } = opened;
  const listening: Listening = { url: "", port: 0 };
  const services = daemonServices(parts, {
    dir,
    host: options.host ?? config.listen.host,
    port: port ?? config.listen.port,
    log,
    listening,
  });
  // Whatever is connected (workers, MCP servers, event streams, ask clients), the daemon stops in a few seconds:
  // every turn's state is durable, so stopping at any safe point loses nothing.
  const running = await startServices(services, {
    stopped: (name) => log("debug", `shutdown: ${name} stopped`, { service: name }),
    stopFailed: (name, err) => log("error", `shutdown: stopping ${name} failed`, { service: name, err: String(err) }),
  });
  let closing: Promise<void> | undefined;
  return {
    ...{ url: listening.url, node: parts.node.node, config, store: parts.store, runtime: parts.runtime, workers: parts.workers },
    close: () => (closing ??= running.stop().then(() => log("info", "shutdown: done"))),
  };
}
