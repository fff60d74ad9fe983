/**
 * End-to-end harness: a real project made by `wardrik init`'s own code, the real
 * built daemon as a child process, the real CLI as child processes, real HTTP.
 * Files that need no daemon process run the daemon inside the test process
 * instead (daemon-mode.ts, in-process-daemon.ts): the same project, database
 * and HTTP, without a process start per daemon.
 *
 * Needs `npm run build` first (the tests run what a user runs: dist/).
 *
 * Every project and process made here is cleaned up after the file (daemons
 * and CLI processes are killed, temp dirs removed), or after one test when
 * given that test's context as `scope`.
 *
 * Ports: by default the harness picks a free port, writes it to the project's
 * config.yaml `listen:` and lets both the daemon and the CLI find it there, as a
 * user's would; a start that loses the port to another process retries with a
 * new one. `port: "zero"` runs `wardrik daemon --port 0` instead and hands the
 * CLI the URL through WARDRIK_URL.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { vi } from "vitest";
import { findSdkTarballs } from "../../src/cli/sdk-tarballs.js";
import { initProject } from "../../src/cli/init-project.js";
import { daemonModeOfThisFile, type DaemonMode } from "./daemon-mode.js";
import { afterThisFile } from "./file-cleanups.js";
import { startInProcessDaemon, type InProcessDaemon } from "./in-process-daemon.js";
import { freePort } from "./free-port.js";
import { createMigratedTestDatabase, TEST_DIALECT } from "./test-database.js";
import { followAgentEvents } from "./read-sse.js";
import { sleep, waitFor } from "./wait.js";

export { readSse } from "./read-sse.js";

export { freePort, sleep, waitFor };

export const REPO_ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
export const DAEMON_PKG = join(REPO_ROOT, "packages", "daemon");
export const BIN = join(DAEMON_PKG, "bin", "wardrik.js");
const DIST_MAIN = join(DAEMON_PKG, "dist", "bundle", "cli.cjs");

// Every step here starts processes; on a small, busy machine a CLI run alone can
// take seconds. Generous limits keep slowness from looking like failure.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

if (!existsSync(DIST_MAIN)) {
  throw new Error(
    `The end-to-end tests run the built daemon, but ${DIST_MAIN} does not exist. Run \`npm run build\` at the repository root first.`,
  );
}

// ---------------------------------------------------------------------------
// Plain CLI runs
// ---------------------------------------------------------------------------

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  cwd: string;
  /** Kill the process after this test instead of after the file (pass the test's context). */
  scope?: TestScope;
  /** Added to the environment (WARDRIK_URL / WARDRIK_TOKEN of the test runner are removed first). */
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
  /** Written to the command's standard input (which is otherwise closed). */
  input?: string;
}

/** The environment children get: the runner's, without anything that would point the CLI elsewhere. */
function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" };
  delete env.WARDRIK_URL;
  delete env.WARDRIK_TOKEN;
  delete env.NODE_OPTIONS;
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

const live = new Set<ChildProcess>();

process.once("exit", () => {
  // Last resort: no child outlives the test process.
  for (const child of live) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

function track(child: ChildProcess): void {
  live.add(child);
  child.once("exit", () => live.delete(child));
}

/** Runs `wardrik ARGS` to completion. */
export function runWardrik(args: string[], opts: CliOptions): Promise<CliResult> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: opts.cwd,
    env: childEnv(opts.env),
    stdio: [opts.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
  });
  track(child);
  if (opts.input !== undefined) child.stdin!.end(opts.input);
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (c: string) => (stdout += c));
  child.stderr!.setEncoding("utf8").on("data", (c: string) => (stderr += c));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`wardrik ${args.join(" ")} did not finish in ${timeoutMs} ms.\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** A long-running CLI process (`events --follow`, a waiting `ask`), read as it goes. */
export interface CliProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Complete stdout lines so far. */
  lines(): string[];
  /** Resolves once `test(stdout)` holds; rejects after the timeout with what was printed. */
  waitForOutput(test: (stdout: string, stderr: string) => boolean, timeoutMs?: number): Promise<void>;
  /** Resolves when the process ends. */
  done: Promise<CliResult>;
  /** Sends `signal` (default SIGINT), waits for the end, SIGKILL after `graceMs`. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<CliResult>;
}

export function spawnWardrik(args: string[], opts: CliOptions): CliProcess {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: opts.cwd, env: childEnv(opts.env), stdio: ["ignore", "pipe", "pipe"] });
  track(child);
  let out = "";
  let err = "";
  const watchers = new Set<() => void>();
  const notify = () => {
    for (const w of [...watchers]) w();
  };
  child.stdout!.setEncoding("utf8").on("data", (c: string) => {
    out += c;
    notify();
  });
  child.stderr!.setEncoding("utf8").on("data", (c: string) => {
    err += c;
    notify();
  });
  const done = new Promise<CliResult>((resolve) => {
    child.once("close", (code, signal) => {
      resolve({ code, signal, stdout: out, stderr: err });
      notify();
    });
  });
  const proc: CliProcess = {
    child,
    stdout: () => out,
    stderr: () => err,
    lines: () => out.split("\n").slice(0, -1),
    done,
    waitForOutput(test, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (test(out, err)) {
            cleanup();
            resolve();
          } else if (child.exitCode !== null || child.signalCode !== null) {
            cleanup();
            reject(
              new Error(
                `wardrik ${args.join(" ")} ended (${child.exitCode ?? child.signalCode}) before the expected output.\nstdout: ${out}\nstderr: ${err}`,
              ),
            );
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`wardrik ${args.join(" ")}: expected output not seen in ${timeoutMs} ms.\nstdout: ${out}\nstderr: ${err}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          watchers.delete(check);
        };
        watchers.add(check);
        check();
      });
    },
    async stop(signal = "SIGINT", graceMs = 3000) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
        const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
        try {
          return await done;
        } finally {
          clearTimeout(timer);
        }
      }
      return done;
    },
  };
  cleanupLater(() => proc.stop("SIGKILL").then(() => undefined), opts.scope);
  return proc;
}

// ---------------------------------------------------------------------------
// Projects and daemons
// ---------------------------------------------------------------------------

/**
 * What `wardrik init DIR` writes, by the command's own code run in the test
 * process: a CLI process per project cost a node start and the CLI's imports
 * (about a second on the busy test machine) for every project of the suite.
 * The command itself, its output and its refusals are tested through the
 * CLI in e2e/init.test.ts and e2e/cli-conventions.test.ts.
 */
export function initTestProject(dir: string): void {
  initProject(dir, { sdk: findSdkTarballs(undefined) });
}

export interface ProjectOptions {
  /**
   * config.yaml: a full replacement, or a function of the text `wardrik init` wrote.
   * The harness then sets `listen:` itself (see the module comment).
   */
  config?: string | ((initText: string) => string);
  /** Named model entries added under `models:` (values are written as YAML flow mappings). */
  models?: Record<string, Record<string, unknown>>;
  /**
   * Scripts for the scripted model: NAME -> YAML text, written to scripts/NAME.yaml,
   * with a `models:` entry NAME (provider: script, model: NAME) so an agent can say `model: NAME`.
   */
  scripts?: Record<string, string>;
  /** More files, relative to the project directory (agents/x.md, policies/p.yaml, ...). */
  files?: Record<string, string>;
  /** Files of the init template to remove (e.g. agents/helper.md). */
  remove?: string[];
  /** Extra environment for the daemon only (the CLI gets cliEnv). */
  env?: Record<string, string | undefined>;
  /** Extra environment for every CLI run. */
  cliEnv?: Record<string, string | undefined>;
  /** "config" (default): a free port written to config.yaml. "zero": `--port 0` and WARDRIK_URL for the CLI. */
  port?: "config" | "zero";
  /** Start the daemon right away (default true). */
  start?: boolean;
  /** How long a start may take before it counts as failed (default 40 s: a start returns as soon as the daemon listens, and under load one took more than 20 s). */
  startTimeoutMs?: number;
  /** Dispose of the project after this test instead of after the file (pass the test's context). */
  scope?: TestScope;
  /** Where the daemon runs; default what daemon-mode.ts says of the test file. */
  process?: DaemonMode;
}

export interface ApiResult<T = unknown> {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: T;
}

export interface ApiOptions {
  /** Another token; null sends no Authorization header. */
  token?: string | null;
  headers?: Record<string, string>;
  /** A body sent as is (not JSON-encoded). */
  raw?: string | Uint8Array;
  signal?: AbortSignal;
}

export interface StopResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Milliseconds from the signal to the exit. */
  ms: number;
  /** True when the grace period ran out and SIGKILL ended it. */
  forced: boolean;
}

/** A CloudEvent as the API returns it. */
export interface WireEvent {
  specversion: string;
  id: string;
  source: string;
  type: string;
  time: string;
  subject?: string;
  datacontenttype?: string;
  seq: number;
  run?: string;
  data: Record<string, unknown>;
}

export interface TestProject {
  /** The project directory (made by `wardrik init`). */
  dir: string;
  /** The daemon's base URL (http://127.0.0.1:PORT) once started. */
  readonly url: string;
  readonly port: number;
  /** The local admin token from .wardrik/admin-token. */
  readonly token: string;
  /** The running daemon process, if any (never for a daemon in the test process). */
  readonly child: ChildProcess | undefined;
  /** Where the daemon runs (daemon-mode.ts). */
  readonly mode: DaemonMode;
  /** Everything the daemon printed on stderr, across restarts. */
  daemonStderr(): string;
  daemonStdout(): string;
  /** `wardrik ARGS` in the project directory. */
  cli(args: string[], opts?: { env?: Record<string, string | undefined>; timeoutMs?: number; input?: string }): Promise<CliResult>;
  /** A long-running `wardrik ARGS` in the project directory (killed after the file, or after the test of `scope`). */
  spawnCli(args: string[], opts?: { env?: Record<string, string | undefined>; scope?: TestScope }): CliProcess;
  /** An HTTP request to the daemon with the admin token; `body` is sent as JSON. */
  api<T = unknown>(method: string, path: string, body?: unknown, opts?: ApiOptions): Promise<ApiResult<T>>;
  /** Like api(), but throws unless the status is 2xx; returns the JSON body. */
  apiOk<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  /** Writes a file in the project (creating folders). */
  write(relPath: string, content: string): void;
  read(relPath: string): string;
  /** Deletes a file in the project. */
  remove(relPath: string): void;
  /** The ID of the agent with this name (throws when there is none). */
  agentId(name: string): Promise<string>;
  /** Every event of the agent (by name or agt_ ID) after `after`. */
  events(agent: string, after?: number): Promise<WireEvent[]>;
  /** Polls the agent's events until one matches; returns it. */
  waitForEvent(agent: string, match: (e: WireEvent) => boolean, timeoutMs?: number): Promise<WireEvent>;
  /** Polls the agent's events until the turn `run` has ended; returns the ending event. */
  waitForTurnEnd(agent: string, run: string, timeoutMs?: number): Promise<WireEvent>;
  /**
   * Sends a message through the API (no CLI process, no event stream) and polls
   * until its turn has ended. For tests whose subject is not `wardrik ask`.
   */
  send(agent: string, text: string, conversation?: string, timeoutMs?: number): Promise<{ message: string; run: string; end: WireEvent }>;
  /** Starts the daemon (waits until /v1/health answers). */
  start(): Promise<void>;
  /** SIGTERM, waits up to `graceMs` (default 20 s), then SIGKILL. */
  stop(graceMs?: number): Promise<StopResult>;
  /** SIGKILL, as a crash would (a spawned daemon only). */
  kill(): Promise<StopResult>;
  /** stop() then start(), on the same port when it is still free. */
  restart(graceMs?: number): Promise<StopResult>;
  /** Kills the daemon (SIGKILL) and deletes the temp directory; runs by itself after the test or file. */
  dispose(): Promise<void>;
}

// ---- cleanup ----

type Cleanup = () => Promise<void>;

/** A test's context (the argument of an `it` callback), for cleanup after that test. */
export interface TestScope {
  onTestFinished(fn: () => Promise<void> | void): void;
}

/**
 * Runs `fn` after the test whose context is `scope`, or else after the file.
 * (Not vitest's global onTestFinished: under describe.concurrent it can attach
 * the cleanup to whichever test happens to be current, and kill another test's
 * processes early.) Other helpers use it for their own resources.
 */
export function cleanupLater(fn: Cleanup, scope?: TestScope): void {
  if (scope) scope.onTestFinished(() => fn());
  else afterThisFile(fn);
}

// ---- helpers ----

/** A YAML value written as JSON (YAML 1.2 reads JSON). */
function yamlValue(v: unknown): string {
  return JSON.stringify(v);
}

/** An agent file: frontmatter from `fields` (JSON-style YAML values), then the instructions. */
export function agentFile(fields: Record<string, unknown>, instructions = "You are a test agent."): string {
  const lines = Object.entries(fields).map(([k, v]) => `${k}: ${yamlValue(v)}`);
  return `---\n${lines.join("\n")}\n---\n${instructions}\n`;
}

function addModels(config: string, entries: Record<string, Record<string, unknown>>): string {
  const block = Object.entries(entries)
    .map(([name, entry]) => `  ${name}: ${yamlValue(entry)}\n`)
    .join("");
  if (block === "") return config;
  if (/^models:[ \t]*$/m.test(config)) return config.replace(/^models:[ \t]*\n/m, `models:\n${block}`);
  return `${config.replace(/\n?$/, "\n")}models:\n${block}`;
}

function setListen(config: string, port: number): string {
  const line = `listen: 127.0.0.1:${port}`;
  if (/^listen:.*$/m.test(config)) return config.replace(/^listen:.*$/m, line);
  return `${config.replace(/\n?$/, "\n")}${line}\n`;
}

function stripListen(config: string): string {
  return config.replace(/^listen:.*\n?/m, "");
}

const LISTENING = /wardrik daemon listening on (http:\/\/\S+)/;

const INIT_DATABASE = /^database:[ \t]*sqlite:\.wardrik\/wardrik\.db[ \t]*$/m;

/**
 * On a PostgreSQL run (WARDRIK_TEST_DB=postgres) the project gets a fresh
 * PostgreSQL database instead of init's SQLite file, already migrated (a
 * copy of the run's template: the daemon's start has nothing to apply). A
 * database the test wrote into config.yaml itself stays as written.
 */
async function chooseDatabase(config: string, home: string, scope?: TestScope): Promise<string> {
  if (TEST_DIALECT !== "postgres") return config;
  const named = /^database:/m.test(config);
  if (named && !INIT_DATABASE.test(config)) return config;
  const { url } = await createMigratedTestDatabase({ dir: home, ...(scope ? { scope } : {}) });
  const line = `database: ${url}`;
  return named ? config.replace(INIT_DATABASE, line) : `${config.replace(/\n?$/, "\n")}${line}\n`;
}

/**
 * Makes a project with the real `wardrik init` in a fresh temp dir, applies the
 * options, and (unless start: false) starts the daemon.
 */
export async function createProject(options: ProjectOptions = {}): Promise<TestProject> {
  const tmp = mkdtempSync(join(tmpdir(), "wardrik-e2e-"));
  const dir = join(tmp, "project");
  let disposed = false;
  let child: ChildProcess | undefined;
  let inProcess: InProcessDaemon | undefined;
  const where: DaemonMode = options.process ?? daemonModeOfThisFile();
  // A scoped project's database is dropped after its daemon stopped, by dispose(): vitest runs a test's onTestFinished
  // callbacks last-registered first, and the database is made after the project's own cleanup was registered. Dropped
  // first, it ended the connections of a daemon still running (in the test process, an error that escaped).
  const dropsAfterDispose: (() => Promise<void> | void)[] = [];
  const databaseScope: TestScope | undefined = options.scope && { onTestFinished: (fn) => void dropsAfterDispose.push(fn) };
  let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> | undefined;
  let url = "";
  let port = 0;
  let stderr = "";
  let stdout = "";
  const mode = options.port ?? "config";

  const project: TestProject = {
    dir,
    get url() {
      return url;
    },
    get port() {
      return port;
    },
    get token() {
      return readFileSync(join(dir, ".wardrik", "admin-token"), "utf8").trim();
    },
    get child() {
      return child;
    },
    mode: where,
    daemonStderr: () => stderr,
    daemonStdout: () => stdout,
    cli: (args, opts = {}) =>
      runWardrik(args, {
        cwd: dir,
        env: { ...cliEnv(), ...opts.env },
        ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
        ...(opts.input !== undefined ? { input: opts.input } : {}),
      }),
    spawnCli: (args, opts = {}) =>
      spawnWardrik(args, { cwd: dir, env: { ...cliEnv(), ...opts.env }, ...(opts.scope ? { scope: opts.scope } : {}) }),
    async api<T>(method: string, path: string, body?: unknown, opts: ApiOptions = {}): Promise<ApiResult<T>> {
      if (!url) throw new Error("The daemon is not running.");
      inProcess?.assertAlive();
      const headers: Record<string, string> = { ...opts.headers };
      const token = opts.token === undefined ? project.token : opts.token;
      if (token !== null) headers.authorization = `Bearer ${token}`;
      let payload: string | Uint8Array | undefined = opts.raw;
      if (payload === undefined && body !== undefined) payload = JSON.stringify(body);
      if (payload !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type"))
        headers["content-type"] = "application/json";
      const res = await fetch(url + path, {
        method,
        headers,
        ...(payload !== undefined ? { body: payload } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      const text = await res.text();
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      return { status: res.status, headers: res.headers, text, json: json as T };
    },
    async apiOk<T>(method: string, path: string, body?: unknown): Promise<T> {
      const r = await project.api<T>(method, path, body);
      if (r.status < 200 || r.status > 299) throw new Error(`${method} ${path} answered ${r.status}: ${r.text}`);
      return r.json;
    },
    write(relPath, content) {
      const p = join(dir, relPath);
      mkdirSync(dirname(p), { recursive: true });
      writeFileSync(p, content);
    },
    read: (relPath) => readFileSync(join(dir, relPath), "utf8"),
    remove(relPath) {
      rmSync(join(dir, relPath), { force: true });
    },
    async agentId(name) {
      const r = await project.apiOk<{ agents: { id: string; name: string }[] }>("GET", `/v1/agents?name=${encodeURIComponent(name)}`);
      const a = r.agents.find((x) => x.name === name);
      if (!a) throw new Error(`No agent named ${name}`);
      return a.id;
    },
    async events(agent, after = 0) {
      const id = agent.startsWith("agt_") ? agent : await project.agentId(agent);
      const out: WireEvent[] = [];
      for (;;) {
        const page: { events: WireEvent[] } = await project.apiOk<{ events: WireEvent[] }>(
          "GET",
          `/v1/agents/${id}/events?after=${after}&limit=1000`,
        );
        out.push(...page.events);
        if (page.events.length < 1000) return out;
        after = page.events[page.events.length - 1]!.seq;
      }
    },
    async waitForEvent(agent, match, timeoutMs = 30_000) {
      const id = agent.startsWith("agt_") ? agent : await project.agentId(agent);
      return followAgentEvents(project, id, match, `an event of ${agent}`, timeoutMs);
    },
    waitForTurnEnd(agent, run, timeoutMs) {
      return project.waitForEvent(agent, (e) => e.run === run && /\.turn\.(completed|failed|cancelled)$/.test(e.type), timeoutMs);
    },
    async send(agent, text, conversation = "main", timeoutMs = 30_000) {
      const id = agent.startsWith("agt_") ? agent : await project.agentId(agent);
      const q = await project.apiOk<{ message: string; seq: number }>("POST", `/v1/agents/${id}/messages`, { text, conversation });
      const started = await project.waitForEvent(
        id,
        (e) => short(e.type) === "turn.started" && ((e.data.messages as string[] | undefined) ?? []).includes(q.message),
        timeoutMs,
      );
      const end = await project.waitForTurnEnd(id, started.run!, timeoutMs);
      return { message: q.message, run: started.run!, end };
    },
    async start() {
      if (child || inProcess) throw new Error("The daemon is already running.");
      for (let attempt = 1; ; attempt++) {
        if (mode === "config") {
          port ||= await freePort();
          project.write("config.yaml", setListen(project.read("config.yaml"), port));
        }
        const outcome = where === "in-process" ? await startInProcess() : await startOnce();
        if (outcome === "ok") return;
        if (outcome === "port-taken" && mode === "config" && attempt < 4) {
          port = 0;
          continue;
        }
        throw new Error(`The daemon did not start (${outcome}).\nstderr:\n${stderr}`);
      }
    },
    stop: (graceMs = 20_000) => stopWith("SIGTERM", graceMs),
    kill: () => stopWith("SIGKILL", 5000),
    async restart(graceMs) {
      const r = await project.stop(graceMs);
      await project.start();
      return r;
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      // Cleanup needs no graceful stop: the temp project goes away with it.
      try {
        if (child) await stopWith("SIGKILL", 5000);
        if (inProcess) await stopWith("SIGTERM", 0);
      } finally {
        rmSync(tmp, { recursive: true, force: true });
        for (const drop of dropsAfterDispose.splice(0)) await drop();
      }
    },
  };

  function cliEnv(): Record<string, string | undefined> {
    return { ...(mode === "zero" && url ? { WARDRIK_URL: url } : {}), ...options.cliEnv };
  }

  async function startOnce(): Promise<"ok" | "port-taken" | string> {
    const args = [BIN, "daemon", ...(mode === "zero" ? ["--port", "0"] : [])];
    const proc = spawn(process.execPath, args, { cwd: dir, env: childEnv(options.env), stdio: ["ignore", "pipe", "pipe"] });
    track(proc);
    const myExit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      proc.once("exit", (code, signal) => resolve({ code, signal })),
    );
    const startedAt = stderr.length;
    let seen: (u: string) => void = () => undefined;
    const listening = new Promise<string>((resolve) => (seen = resolve));
    proc.stdout!.setEncoding("utf8").on("data", (c: string) => (stdout += c));
    proc.stderr!.setEncoding("utf8").on("data", (c: string) => {
      stderr += c;
      const m = LISTENING.exec(stderr.slice(startedAt));
      if (m) seen(m[1]!);
    });
    const timeoutMs = options.startTimeoutMs ?? 40_000;
    let timer: NodeJS.Timeout | undefined;
    const result = await Promise.race([
      listening.then((u) => ({ kind: "listening" as const, u })),
      myExit.then((e) => ({ kind: "exit" as const, e })),
      new Promise<{ kind: "timeout" }>((resolve) => (timer = setTimeout(() => resolve({ kind: "timeout" }), timeoutMs))),
    ]);
    clearTimeout(timer);
    if (result.kind === "exit") {
      const mine = stderr.slice(startedAt);
      return /EADDRINUSE/.test(mine) ? "port-taken" : `exited with ${result.e.code ?? result.e.signal}`;
    }
    if (result.kind === "timeout") {
      proc.kill("SIGKILL");
      await myExit;
      return `no "listening" line within ${timeoutMs} ms`;
    }
    child = proc;
    exited = myExit;
    url = result.u.replace(/\/+$/, "");
    port = Number(new URL(url).port);
    void myExit.then(() => {
      if (child === proc) {
        child = undefined;
        exited = undefined;
      }
    });
    await waitFor(
      async () => {
        const r = await fetch(`${url}/v1/health`);
        return r.ok;
      },
      `${url}/v1/health`,
      timeoutMs,
    );
    return "ok";
  }

  /** startOnce's outcomes, for a daemon in the test process. */
  async function startInProcess(): Promise<"ok" | "port-taken" | string> {
    try {
      inProcess = await startInProcessDaemon({
        dir,
        env: childEnv(options.env),
        ...(mode === "zero" ? { port: 0 } : {}),
        write: (line) => (stderr += line),
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EADDRINUSE" || /EADDRINUSE/.test(String(err))) return "port-taken";
      // What `wardrik daemon` does with a start that fails: the reason is logged (in-process-daemon.ts), then exit 1.
      return "exited with 1";
    }
    url = inProcess.url.replace(/\/+$/, "");
    port = Number(new URL(url).port);
    return "ok";
  }

  async function stopWith(signal: NodeJS.Signals, graceMs: number): Promise<StopResult> {
    if (inProcess) {
      // No process to signal: SIGTERM is the close the command runs on it; nothing in the test process can SIGKILL it.
      if (signal !== "SIGTERM") throw new Error(`${signal} needs a spawned daemon (daemon-mode.ts)`);
      const daemon = inProcess;
      inProcess = undefined;
      const { code, ms } = await daemon.close();
      if (mode === "zero") url = "";
      return { code, signal: null, ms, forced: false };
    }
    const proc = child;
    const ended = exited;
    if (!proc || !ended) throw new Error("The daemon is not running.");
    const t0 = Date.now();
    proc.kill(signal);
    let forced = false;
    let timer: NodeJS.Timeout | undefined;
    const first = await Promise.race([ended, new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), graceMs)))]);
    clearTimeout(timer);
    let e: { code: number | null; signal: NodeJS.Signals | null };
    if (first === "late") {
      forced = true;
      proc.kill("SIGKILL");
      e = await ended;
    } else {
      e = first;
    }
    child = undefined;
    exited = undefined;
    if (mode === "zero") url = "";
    return { code: e.code, signal: e.signal, ms: Date.now() - t0, forced };
  }

  cleanupLater(() => project.dispose(), options.scope);

  initTestProject(dir);

  let config = project.read("config.yaml");
  if (typeof options.config === "string") config = options.config;
  else if (options.config) config = options.config(config);
  const scriptModels: Record<string, Record<string, unknown>> = {};
  for (const [name, yaml] of Object.entries(options.scripts ?? {})) {
    project.write(join("scripts", `${name}.yaml`), yaml);
    scriptModels[name] = { provider: "script", model: name };
  }
  config = addModels(config, { ...scriptModels, ...options.models });
  if (mode === "zero") config = stripListen(config);
  config = await chooseDatabase(config, tmp, databaseScope);
  project.write("config.yaml", config);
  for (const f of options.remove ?? []) project.remove(f);
  for (const [p, text] of Object.entries(options.files ?? {})) project.write(p, text);

  if (options.start !== false) await project.start();
  return project;
}

// ---------------------------------------------------------------------------
// Small readers shared by the suites
// ---------------------------------------------------------------------------

/** `dev.wardrik.turn.completed` -> `turn.completed`. */
export function short(type: string): string {
  return type.startsWith("dev.wardrik.") ? type.slice("dev.wardrik.".length) : type;
}

/** The run (turn ID) that took `messageId`, from the agent's events. */
export function runOfMessage(events: WireEvent[], messageId: string): string | undefined {
  return events.find((e) => short(e.type) === "turn.started" && (e.data.messages as string[] | undefined)?.includes(messageId))?.run;
}

export const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
export const AGENT_ID = /^agt_[0-9A-HJKMNP-TV-Z]{26}$/;
