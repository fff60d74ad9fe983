/**
 * One daemon of a test cluster: `wardrik daemon --port P --node NAME` in a
 * project folder, killed (SIGKILL), paused (SIGSTOP), resumed and started
 * again on the same port. No vitest here: the cluster benchmark uses it too.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { waitUntil, type FaultDaemon } from "../faults/fault-api.js";
import { freePort } from "../helpers/free-port.js";

const BIN = join(fileURLToPath(new URL("../../../../", import.meta.url)), "packages", "daemon", "bin", "wardrik.js");
const LISTENING = /wardrik daemon listening on (http:\/\/\S+)/;

export interface ClusterNode extends FaultDaemon {
  readonly name: string;
  readonly alive: boolean;
  stderr(): string;
  /** SIGSTOP: the process is frozen, its sockets and leases left as they are. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
}

/** One daemon of the cluster, started from the project folder on a port of its own. */
export function clusterNode(p: { dir: string; token: string }, name: string, env: Record<string, string> = {}): ClusterNode {
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let port = 0;
  let err = "";
  const node: ClusterNode = {
    name,
    dir: p.dir,
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    get token() {
      return p.token;
    },
    get pid() {
      return child?.pid;
    },
    get alive() {
      return child !== undefined;
    },
    stderr: () => err,
    async start() {
      if (child) throw new Error(`${name} already runs`);
      // A node comes back on its own port, where its workers and clients look for it.
      for (let attempt = 1; ; attempt++) {
        if (port === 0 || attempt > 1) port = await freePort();
        const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
        delete childEnv.NODE_OPTIONS;
        delete childEnv.WARDRIK_URL;
        delete childEnv.WARDRIK_TOKEN;
        const proc = spawn(process.execPath, [BIN, "daemon", "--port", String(port), "--node", name], {
          cwd: p.dir,
          env: childEnv,
          stdio: ["ignore", "ignore", "pipe"],
        });
        const from = err.length;
        const exit = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
        const ready = await new Promise<"ok" | "exit">((resolve) => {
          proc.stderr!.setEncoding("utf8").on("data", (c: string) => {
            err += c;
            if (LISTENING.test(err.slice(from))) resolve("ok");
          });
          void exit.then(() => resolve("exit"));
        });
        if (ready === "ok") {
          child = proc;
          exited = exit.then(() => {
            if (child === proc) child = undefined;
          });
          await waitUntil(async () => (await fetch(`${node.url}/v1/health`)).ok, `${name}'s health`, 20_000);
          return;
        }
        if (!/EADDRINUSE/.test(err.slice(from)) || attempt >= 3) throw new Error(`${name} exited at start:\n${err.slice(from)}`);
      }
    },
    async kill() {
      if (!child) return;
      child.kill("SIGCONT");
      child.kill("SIGKILL");
      await exited;
    },
    async waitForExit(timeoutMs = 10_000) {
      await waitUntil(() => child === undefined, `${name} to exit`, timeoutMs, 5);
    },
    pause() {
      child?.kill("SIGSTOP");
    },
    resume() {
      child?.kill("SIGCONT");
    },
  };
  return node;
}
