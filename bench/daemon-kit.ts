/**
 * The daemon as users meet it, for the benchmarks: the built `wardrik` binary
 * started as a child process in a fresh project (`wardrik init`), a worker
 * process on the SDK serving `lookup`, and the HTTP API + the SSE stream as the
 * client. Everything resolves from the tree this file sits in (or WARDRIK_BENCH_ROOT),
 * so `compare` can run the same harness against another commit's build.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { WardrikClient, type FollowOptions } from "@wardrik/sdk";

const here = dirname(fileURLToPath(import.meta.url));
/** The checkout under test: bench/dist/ sits two levels below it. */
export const ROOT = process.env.WARDRIK_BENCH_ROOT ?? join(here, "..", "..");
export const BIN = join(ROOT, "packages", "daemon", "bin", "wardrik.js");
const WORKER = join(here, "daemon-worker.js");

export interface BenchDaemon {
  /** The project the daemon runs in. */
  dir: string;
  url: string;
  token: string;
  pid: number;
  client: WardrikClient;
  /** Seconds from spawn to the first healthy answer. */
  startSeconds: number;
  /** CPU time (user + system) the daemon has used so far, in milliseconds. */
  cpuMs(): number;
  /** Resident memory now and at its peak (VmRSS, VmHWM), in MB. */
  rssMb(): { now: number; peak: number };
  agentId(name: string): Promise<string>;
  close(): Promise<void>;
}

/** One agent `bench` whose scripted model asks for `calls` worker lookups, then answers; the worker allowed. */
export function benchProject(opts: { calls: number; delayMs?: number }): Record<string, string> {
  const delay = opts.delayMs ?? 0;
  const calls = Array.from({ length: opts.calls }, (_, i) => `      - { tool: "workers/lookup", args: { id: "id_${i}" } }`);
  return {
    "agents/bench.md": `---\ndescription: Benchmark agent.\nmodel: bench\ntools: ["workers/*"]\npolicy: bench\nmax_iterations: 20\n---\nYou are a benchmark agent.\n`,
    "policies/bench.yaml":
      "description: Benchmark - the worker's tools run without asking.\nrules:\n  - tool: workers/*\n    decision: allow\n",
    "scripts/bench.yaml": [
      "description: one round of lookups, then an answer",
      "steps:",
      `  - delay_ms: ${delay}`,
      "    tool_calls:",
      ...calls,
      `  - delay_ms: ${delay}`,
      '    text: "done"',
      "",
    ].join("\n"),
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function procStatus(pid: number, field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : NaN;
}

function statFields(pid: number | "self"): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** CPU time (user + system) of a process so far, in ms: utime and stime, the 12th and 13th fields after the command name, in clock ticks (100 a second on Linux). */
export function procCpuMs(pid: number): number {
  const fields = statFields(pid);
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** CPU time (user + system) of this process's children that have ended and been waited for (cutime + cstime), in ms. */
export function endedChildrenCpuMs(): number {
  const fields = statFields("self");
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

/** `wardrik init`, the files written (and config.yaml changed by `config`), the daemon started; a worker connected when `worker` is set. */
export async function startDaemon(
  files: Record<string, string>,
  opts: { worker?: boolean; config?: (text: string) => string } = {},
): Promise<BenchDaemon> {
  const root = mkdtempSync(join(tmpdir(), "wardrik-bench-daemon-"));
  const dir = join(root, "project");
  const init = spawnSync(process.execPath, [BIN, "init", dir], { encoding: "utf8" });
  if (init.status !== 0) throw new Error(`wardrik init failed: ${init.stderr}`);
  rmSync(join(dir, "agents", "helper.md"), { force: true });
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  const port = await freePort();
  let config = readFileSync(join(dir, "config.yaml"), "utf8");
  config = config.replace(/^models:[ \t]*\n/m, "models:\n  bench: { provider: script, model: bench }\n");
  if (opts.config) config = opts.config(config);
  writeFileSync(join(dir, "config.yaml"), config.replace(/^listen:.*$/m, `listen: 127.0.0.1:${port}`));
  const token = readFileSync(join(dir, ".wardrik", "admin-token"), "utf8").trim();
  const url = `http://127.0.0.1:${port}`;
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  if (process.env.WARDRIK_BENCH_DAEMON_NODE_OPTIONS) env.NODE_OPTIONS = process.env.WARDRIK_BENCH_DAEMON_NODE_OPTIONS;

  const t0 = performance.now();
  // WARDRIK_BENCH_DAEMON_FLAGS="--cpu-prof --cpu-prof-dir=DIR" profiles the daemon (flags NODE_OPTIONS refuses).
  const flags = process.env.WARDRIK_BENCH_DAEMON_FLAGS?.split(" ").filter(Boolean) ?? [];
  const daemon = spawn(process.execPath, [...flags, BIN, "daemon"], { cwd: dir, env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  daemon.stderr!.setEncoding("utf8").on("data", (c: string) => (stderr += c));
  const exited = new Promise<void>((resolve) => daemon.once("exit", () => resolve()));
  for (;;) {
    if (daemon.exitCode !== null) throw new Error(`the daemon exited at start:\n${stderr}`);
    const ok = await fetch(`${url}/v1/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  const startSeconds = (performance.now() - t0) / 1000;
  const client = new WardrikClient({ url, token });

  let worker: ChildProcess | undefined;
  if (opts.worker) {
    const wenv: NodeJS.ProcessEnv = { ...process.env, WARDRIK_URL: url, WARDRIK_TOKEN: token };
    delete wenv.NODE_OPTIONS;
    worker = spawn(process.execPath, [WORKER], { env: wenv, stdio: ["pipe", "ignore", "inherit"] });
    await waitForWorker(url, token, client);
  }

  const pid = daemon.pid!;
  return {
    dir,
    url,
    token,
    pid,
    client,
    startSeconds,
    cpuMs: () => procCpuMs(pid),
    rssMb: () => ({ now: procStatus(pid, "VmRSS"), peak: procStatus(pid, "VmHWM") }),
    agentId: async (name) => {
      const a = await client.findAgent(name);
      if (!a) throw new Error(`no agent ${name}`);
      return a.id;
    },
    close: async () => {
      if (worker && worker.exitCode === null) {
        const gone = new Promise((r) => worker.once("exit", r));
        worker.kill("SIGKILL");
        await gone;
      }
      // SIGTERM first: a daemon run with --cpu-prof writes its profile on a clean exit.
      if (daemon.exitCode === null) daemon.kill("SIGTERM");
      const timer = setTimeout(() => daemon.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A worker is connected once the bench agent can call `workers/lookup` (GET /v1/agents/{id}/tools). */
async function waitForWorker(url: string, token: string, client: WardrikClient): Promise<void> {
  const deadline = Date.now() + 30_000;
  const id = (await client.findAgent("bench"))?.id;
  if (!id) throw new Error("no bench agent");
  while (Date.now() < deadline) {
    const res = await fetch(`${url}/v1/agents/${id}/tools`, { headers: { authorization: `Bearer ${token}` } });
    if ((await res.text()).includes("workers/lookup")) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("the bench worker did not register within 30 s");
}

/** The events a turn-end watcher reads: a type, the turn's run, and the data of turn.started. */
interface TurnEvent {
  type: string;
  run?: string | undefined;
  data: unknown;
}

/**
 * Follows the agent's SSE stream (`follow`: the stream's options, such as a
 * conversation filter) and resolves, per accepted message, the event that
 * ended its turn (turn.started names the messages a turn took).
 */
export function turnEnds(
  d: Pick<BenchDaemon, "client">,
  agentId: string,
  follow: Omit<FollowOptions, "signal"> = {},
  onError?: (err: unknown) => void,
): { ended(message: string): Promise<{ type: string }>; stop(): void } {
  return turnEndsOf((signal) => d.client.follow(agentId, { ...follow, signal }), onError);
}

/** As turnEnds, on any stream of events (the org feed); `onError`: told when the stream fails (else it throws). */
export function turnEndsOf(
  source: (signal: AbortSignal) => AsyncIterable<TurnEvent>,
  onError?: (err: unknown) => void,
): {
  ended(message: string): Promise<{ type: string }>;
  stop(): void;
} {
  const waiting = new Map<string, (e: { type: string }) => void>();
  const done = new Map<string, { type: string }>();
  const messagesOf = new Map<string, string[]>();
  const ac = new AbortController();
  void (async () => {
    for await (const e of source(ac.signal)) {
      if (e.type.endsWith(".turn.started")) messagesOf.set(e.run!, (e.data as { messages: string[] }).messages);
      else if (/\.turn\.(completed|failed|cancelled)$/.test(e.type)) {
        for (const m of messagesOf.get(e.run!) ?? []) {
          const w = waiting.get(m);
          if (w) {
            waiting.delete(m);
            w(e);
          } else done.set(m, e);
        }
        messagesOf.delete(e.run!);
      }
    }
  })().catch((err: unknown) => {
    if (ac.signal.aborted) return;
    if (!onError) throw err;
    onError(err);
  });
  return {
    ended: (message) => {
      const e = done.get(message);
      if (e) {
        done.delete(message);
        return Promise.resolve(e);
      }
      return new Promise((resolve) => waiting.set(message, resolve));
    },
    stop: () => ac.abort(),
  };
}
