/**
 * A standalone fault daemon for benchmarks and harnesses outside vitest
 * (the tests use test/helpers/spawn-daemon.ts): `wardrik init` in a temp
 * folder, the given files and scripts, and the built daemon started, killed
 * (SIGKILL) and started again on its port.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { freePort } from "../helpers/free-port.js";
import { waitUntil, type FaultDaemon } from "./fault-api.js";
import { BIN } from "./fault-paths.js";

function runCli(args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
    child.once("error", reject);
    child.once("close", (code) => (code === 0 ? resolve() : reject(new Error(`wardrik ${args.join(" ")} failed (${code}): ${err}`))));
  });
}

export interface StandaloneProject extends FaultDaemon {
  /** The temp directory holding the project (and anything else the caller puts there). */
  readonly root: string;
  stderr(): string;
  write(rel: string, text: string): void;
  /** SIGKILL if running, then removes the temp directory. */
  dispose(): Promise<void>;
}

/**
 * `wardrik init` in a temp dir, the given files written, config.yaml given a free
 * port, and each script written to scripts/NAME.yaml with a `models:` entry NAME.
 */
export async function standaloneProject(opts: {
  files: Record<string, string>;
  scripts: Record<string, string>;
  env?: NodeJS.ProcessEnv;
  /** config.yaml's `database:` (default: init's SQLite file in the project). */
  database?: string;
}): Promise<StandaloneProject> {
  const root = mkdtempSync(join(tmpdir(), "wardrik-faults-"));
  const dir = join(root, "project");
  await runCli(["init", dir], root);
  rmSync(join(dir, "agents", "helper.md"), { force: true });
  const write = (rel: string, text: string) => {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  };
  for (const [rel, text] of Object.entries(opts.files)) write(rel, text);
  for (const [name, text] of Object.entries(opts.scripts)) write(`scripts/${name}.yaml`, text);
  let config = readFileSync(join(dir, "config.yaml"), "utf8");
  const models = Object.keys(opts.scripts)
    .map((n) => `  ${n}: { provider: script, model: ${n} }\n`)
    .join("");
  config = config.replace(/^models:[ \t]*\n/m, `models:\n${models}`);
  if (opts.database !== undefined) config = config.replace(/^database:.*$/m, `database: ${opts.database}`);
  let port = await freePort();
  const setPort = () => writeFileSync(join(dir, "config.yaml"), config.replace(/^listen:.*$/m, `listen: 127.0.0.1:${port}`));
  setPort();
  const token = readFileSync(join(dir, ".wardrik", "admin-token"), "utf8").trim();
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let stderr = "";

  const startOnce = async (): Promise<"ok" | "port-taken"> => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.NODE_OPTIONS;
    delete env.WARDRIK_URL;
    delete env.WARDRIK_TOKEN;
    Object.assign(env, opts.env);
    const proc = spawn(process.execPath, [BIN, "daemon"], { cwd: dir, env, stdio: ["ignore", "ignore", "pipe"] });
    const from = stderr.length;
    const exit = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
    const ready = await new Promise<"ok" | "exit">((resolve) => {
      proc.stderr!.setEncoding("utf8").on("data", (c: string) => {
        stderr += c;
        if (/wardrik daemon listening on/.test(stderr.slice(from))) resolve("ok");
      });
      void exit.then(() => resolve("exit"));
    });
    if (ready === "exit") {
      if (/EADDRINUSE/.test(stderr.slice(from))) return "port-taken";
      throw new Error(`the daemon exited at start:\n${stderr.slice(from)}`);
    }
    child = proc;
    exited = exit.then(() => {
      if (child === proc) child = undefined;
    });
    return "ok";
  };

  const project: StandaloneProject = {
    root,
    dir,
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    token,
    get pid() {
      return child?.pid;
    },
    stderr: () => stderr,
    write,
    async start() {
      if (child) throw new Error("the daemon already runs");
      for (let attempt = 0; (await startOnce()) === "port-taken"; attempt++) {
        if (attempt >= 3) throw new Error("no free port for the daemon");
        port = await freePort();
        setPort();
      }
      await waitUntil(async () => (await fetch(`${project.url}/v1/health`)).ok, "the daemon's health", 20_000);
    },
    async kill() {
      if (!child) throw new Error("the daemon is not running");
      child.kill("SIGKILL");
      await exited;
    },
    async waitForExit(timeoutMs = 10_000) {
      await waitUntil(() => child === undefined, "the daemon to exit", timeoutMs, 5);
    },
    async dispose() {
      if (child) await project.kill();
      rmSync(root, { recursive: true, force: true });
    },
  };
  return project;
}
