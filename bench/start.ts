/**
 * Daemon start: the built `wardrik daemon --port 0` spawned in a project made by
 * `wardrik init` (the scripted `demo` model, no MCP, no Slack), timed from spawn
 * to the "listening" log line. Each run starts a fresh project twice: `first`
 * (creates the database) and `restart` (opens it again). `cpu_ms` is the
 * daemon's CPU time (user + system) when the line arrived, which a busy machine
 * disturbs less than the wall clock.
 *
 *   npm run bench -- start [RUNS]     (default 7)
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const ROOT = process.env.WARDRIK_BENCH_ROOT ?? join(here, "..", "..");
const BIN = join(ROOT, "packages", "daemon", "bin", "wardrik.js");
const runs = Number(process.argv[2] ?? 7);

interface Start {
  seconds: number;
  cpuMs: number;
}

function cpuMs(pid: number): number {
  // utime and stime, the 12th and 13th fields after the command name, in clock ticks (100 a second).
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Spawns the daemon in `dir`, waits for its listening line, stops it with SIGINT. */
async function startOnce(dir: string): Promise<Start> {
  const env: NodeJS.ProcessEnv = { ...process.env, WARDRIK_LOG_LEVEL: "info" };
  delete env.NODE_OPTIONS;
  const flags = process.env.WARDRIK_BENCH_DAEMON_FLAGS?.split(" ").filter(Boolean) ?? [];
  const t0 = performance.now();
  const daemon = spawn(process.execPath, [...flags, BIN, "daemon", "--port", "0"], { cwd: dir, env, stdio: ["ignore", "ignore", "pipe"] });
  const exited = new Promise<void>((resolve) => daemon.once("exit", () => resolve()));
  let stderr = "";
  const result = await new Promise<Start>((resolve, reject) => {
    daemon.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      if (stderr.includes("daemon listening on")) {
        const seconds = (performance.now() - t0) / 1000;
        resolve({ seconds, cpuMs: cpuMs(daemon.pid!) });
      }
    });
    void exited.then(() => reject(new Error(`the daemon exited before listening:\n${stderr}`)));
  });
  // A moment before the stop: builds before the fix in cli/commands/daemon.ts could lose a SIGINT sent just as the daemon listened.
  await new Promise((r) => setTimeout(r, 200));
  daemon.kill("SIGINT");
  // A stop that hangs is a finding, not a reason to wait forever.
  const timer = setTimeout(() => daemon.kill("SIGKILL"), 15_000);
  await exited;
  clearTimeout(timer);
  if (daemon.signalCode === "SIGKILL") throw new Error(`the daemon did not stop within 15 s of SIGINT:\n${stderr}`);
  return result;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (n: number) => Number(n.toFixed(3));

const first: Start[] = [];
const restart: Start[] = [];
for (let i = 0; i < runs; i++) {
  const root = mkdtempSync(join(tmpdir(), "wardrik-bench-start-"));
  const dir = join(root, "project");
  const init = spawnSync(process.execPath, [BIN, "init", dir], { encoding: "utf8" });
  if (init.status !== 0) throw new Error(`wardrik init failed: ${init.stderr}`);
  first.push(await startOnce(dir));
  restart.push(await startOnce(dir));
  rmSync(root, { recursive: true, force: true });
}
// Flat numeric figures, so `all` and `compare` tables show them: medians, and the fastest start.
console.log(
  JSON.stringify({
    workload: "start",
    runs,
    first_seconds_to_listening: round(median(first.map((s) => s.seconds))),
    restart_seconds_to_listening: round(median(restart.map((s) => s.seconds))),
    min_seconds_to_listening: round(Math.min(...first.concat(restart).map((s) => s.seconds))),
    first_cpu_ms: median(first.map((s) => s.cpuMs)),
    restart_cpu_ms: median(restart.map((s) => s.cpuMs)),
  }),
);
