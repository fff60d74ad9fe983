/**
 * The fault worker as a process (fixtures/fault-worker.ts, a real worker on
 * the SDK): started against a daemon, its own log of every execution read
 * back, kill orders and releases given through files. No vitest here.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TOOLS, type FaultTool } from "./fault-agent.js";
import { agentIdOf, api, waitUntil, type FaultDaemon } from "./fault-api.js";
import { REPO_ROOT, WORKER_FIXTURE } from "./fault-paths.js";
import { workerArgs } from "../helpers/worker-bundle.js";

export interface LogEntry {
  tool: FaultTool;
  key: string;
  phase: "start" | "end";
  pid: number;
  time: number;
  tag: string;
  exec: number;
}

export interface FaultWorker {
  child: ChildProcess;
  logFile: string;
  killFile: string;
  /** The worker's log so far. */
  log(): LogEntry[];
  /**
   * Orders the worker to SIGKILL `pid` once a matching execution has logged
   * "end": before its result leaves ("held", the default), or with the daemon
   * frozen, once the result frame is written to it ("sent").
   */
  killOnEnd(order: { pid: number; tool?: FaultTool; tag?: string; when?: "held" | "sent" }): void;
  /** Ends the held runs (TurnShape.hold) whose tags start with `prefix`, now and from now on. */
  release(prefix: string): void;
  /** For a worker started with `connectLater`: lets it connect now. */
  connect(): void;
  stderr(): string;
  stop(): Promise<void>;
}

export function readLog(file: string): LogEntry[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as LogEntry);
}

/**
 * Spawns the fixture worker against the daemon (it reconnects by itself after a restart).
 * `finishedFile`: the worker remembers finished calls in that file (a new process with the same file answers for them).
 * `connectLater`: the worker starts but connects only when `connect()` is called.
 */
export function startWorker(
  d: Pick<FaultDaemon, "url" | "token">,
  dir: string,
  name = "worker",
  opts: { finishedFile?: string; connectLater?: boolean } = {},
): FaultWorker {
  mkdirSync(dir, { recursive: true });
  const logFile = join(dir, `${name}.log.jsonl`);
  const killFile = join(dir, `${name}.kill.json`);
  const releaseFile = join(dir, `${name}.release`);
  const connectFile = join(dir, `${name}.connect`);
  rmSync(connectFile, { force: true });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    WARDRIK_URL: d.url,
    WARDRIK_TOKEN: d.token,
    FAULT_LOG: logFile,
    FAULT_KILL_FILE: killFile,
    FAULT_RELEASE_FILE: releaseFile,
    ...(opts.finishedFile ? { FAULT_FINISHED_FILE: opts.finishedFile } : {}),
    ...(opts.connectLater ? { FAULT_CONNECT_FILE: connectFile } : {}),
  };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, workerArgs(WORKER_FIXTURE), {
    cwd: REPO_ROOT,
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let err = "";
  child.stderr!.setEncoding("utf8").on("data", (c: string) => (err += c));
  child.stdout!.resume();
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    logFile,
    killFile,
    log: () => readLog(logFile),
    killOnEnd(order) {
      writeFileSync(killFile, JSON.stringify(order));
    },
    release(prefix) {
      appendFileSync(releaseFile, `${prefix}\n`);
    },
    connect() {
      writeFileSync(connectFile, "");
    },
    stderr: () => err,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

/** Waits until a worker serving all three fault tools is connected (seen through the probe agent's tool sources). */
export async function waitForWorker(d: FaultDaemon, pid: number, timeoutMs = 45_000): Promise<void> {
  const probe = await agentIdOf(d, "probe");
  await waitUntil(
    async () => {
      const r = await api<{ tool_sources: { name: string; status: string; reason?: string }[] }>(d, "GET", `/v1/agents/${probe}`);
      return r.tool_sources.some(
        (s) => s.name.includes(`fault-worker-${pid}`) && s.status === "connected" && TOOLS.every((t) => s.reason?.includes(t)),
      );
    },
    `worker ${pid} to register its tools`,
    timeoutMs,
  );
}
