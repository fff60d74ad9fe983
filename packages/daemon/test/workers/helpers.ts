import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { WorkerGateway, type WorkerGatewayOptions } from "../../src/tools/workers/worker-gateway.js";
import type { ToolCallContext } from "../../src/tools/toolset.js";
import { workerArgs } from "../helpers/worker-bundle.js";

export const TOKENS: Record<string, string> = { "token-a": "org-a", "token-b": "org-b", "token-default": "default" };
const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));

export interface TestDaemon {
  gateway: WorkerGateway;
  url: string;
  port: number;
  logs: { level: string; msg: string; fields?: Record<string, unknown> }[];
  close(): Promise<void>;
}

/** A node:http server whose upgrades go to a fresh gateway; port 0 picks a free one. */
export async function startDaemon(options: Partial<WorkerGatewayOptions> = {}, port = 0): Promise<TestDaemon> {
  const logs: TestDaemon["logs"] = [];
  const gateway = new WorkerGateway({
    authenticate: (token) => Promise.resolve(TOKENS[token] ? { org: TOKENS[token] } : undefined),
    log: (level, msg, fields) => logs.push({ level, msg, ...(fields ? { fields } : {}) }),
    // Shorter than the daemon's 30 s: these tests wait out the start's grace where no worker serves a tool.
    reconnectGraceMs: 5_000,
    ...options,
  });
  const server: Server = createServer((_req, res) => res.writeHead(404).end());
  server.on("upgrade", (req, socket, head) => gateway.handleUpgrade(req, socket, head));
  server.listen(port, "127.0.0.1");
  await once(server, "listening");
  const actual = (server.address() as AddressInfo).port;
  return {
    gateway,
    url: `http://127.0.0.1:${actual}`,
    port: actual,
    logs,
    async close() {
      await gateway.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface WorkerEvent {
  event: string;
  [key: string]: unknown;
}

export interface WorkerProcess {
  child: ChildProcess;
  events: WorkerEvent[];
  stderr: () => string;
  /** Resolves with the first event (past or future) that matches. */
  waitFor(match: (e: WorkerEvent) => boolean, timeoutMs?: number): Promise<WorkerEvent>;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/** Runs a fixture as a real worker process (the SDK from source, bundled by worker-bundle.ts). */
export function spawnWorker(fixture: string, env: Record<string, string>): WorkerProcess {
  const file = fileURLToPath(new URL(`./fixtures/${fixture}`, import.meta.url));
  const child = spawn(process.execPath, workerArgs(file), {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const events: WorkerEvent[] = [];
  const watchers = new Set<() => void>();
  let err = "";
  let buffered = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      try {
        events.push(JSON.parse(line) as WorkerEvent);
      } catch {
        err += line + "\n";
      }
      for (const w of [...watchers]) w();
    }
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    events,
    stderr: () => err,
    exited,
    waitFor(match, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const hit = events.find(match);
          if (!hit) return;
          watchers.delete(check);
          clearTimeout(timer);
          resolve(hit);
        };
        const timer = setTimeout(() => {
          watchers.delete(check);
          reject(new Error(`worker event not seen in ${timeoutMs} ms; events: ${JSON.stringify(events)}; stderr: ${err}`));
        }, timeoutMs);
        watchers.add(check);
        check();
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGKILL");
      await exited;
    },
  };
}

export interface TestCall {
  ctx: ToolCallContext;
  controller: AbortController;
  costs: number[];
}

let callSeq = 0;

/** A call context as the runtime builds it. */
export function callContext(overrides: Partial<ToolCallContext> = {}): TestCall {
  const controller = new AbortController();
  const costs: number[] = [];
  callSeq += 1;
  const ctx: ToolCallContext = {
    agent: "agt_test",
    org: "org-a",
    run: "run_test",
    callId: `call_${process.pid}_${callSeq}`,
    idempotencyKey: `idem_${callSeq}`,
    attempt: 1,
    signal: controller.signal,
    cost: (usd) => costs.push(usd),
    timeoutMs: 10_000,
    ...overrides,
  };
  return { ctx, controller, costs };
}

export function workerEnv(daemon: TestDaemon, token = "token-a", name = "w1"): Record<string, string> {
  return { WARDRIK_URL: daemon.url, WARDRIK_TOKEN: token, WORKER_NAME: name };
}
