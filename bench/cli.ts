/**
 * `npm run bench -- cli [RUNS]`: the CPU a short CLI command costs.
 *
 * The built daemon runs in a project made by `wardrik init`; each command is
 * spawned RUNS times (default 20) one after the other, and its CPU time (user +
 * system) is read from this process's count of its ended children
 * (/proc/self/stat cutime + cstime), so nothing is added to the command
 * measured. Beside them, a bare `node -e 0` (Node's own start, which no
 * command can go below) in the same run. `wardrik ls` runs in the project
 * against the running daemon, after one unmeasured run (the CLI's memo of
 * config.yaml written). Goal: at most 150 ms each; on a busy machine Node's
 * own start moves most, so `*_above_node_ms` is printed too.
 *
 * Prints one JSON line.
 */
import { spawnSync } from "node:child_process";
import { availableParallelism, loadavg } from "node:os";
import { BIN, benchProject, endedChildrenCpuMs, startDaemon } from "./daemon-kit.js";

const RUNS = Number(process.argv[2] ?? 20);

/** Mean CPU ms of `argv` run RUNS times in `cwd`; throws when a run fails. */
function cpuPerRun(argv: string[], cwd: string, env: NodeJS.ProcessEnv): number {
  const before = endedChildrenCpuMs();
  for (let i = 0; i < RUNS; i++) {
    const r = spawnSync(process.execPath, argv, { cwd, env, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`${argv.join(" ")} failed (${r.status}): ${r.stderr}`);
  }
  return (endedChildrenCpuMs() - before) / RUNS;
}

const d = await startDaemon(benchProject({ calls: 1 }));
try {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_OPTIONS;
  delete env.WARDRIK_URL;
  delete env.WARDRIK_TOKEN;
  const ls = [BIN, "ls"];
  // Unmeasured: the first command after config.yaml changes reads it in full and remembers it.
  const first = spawnSync(process.execPath, ls, { cwd: d.dir, env, encoding: "utf8" });
  if (first.status !== 0 || !first.stdout.includes("bench")) throw new Error(`wardrik ls failed: ${first.stderr}`);
  const load = loadavg()[0]!;
  // Interleaved in rounds, so a change in the machine's load falls on all three.
  const totals = { node: 0, version: 0, ls: 0 };
  const rounds = 3;
  for (let round = 0; round < rounds; round++) {
    totals.node += cpuPerRun(["-e", "0"], d.dir, env);
    totals.version += cpuPerRun([BIN, "--version"], d.dir, env);
    totals.ls += cpuPerRun(ls, d.dir, env);
  }
  const node = totals.node / rounds;
  const version = totals.version / rounds;
  const list = totals.ls / rounds;
  console.log(
    JSON.stringify({
      workload: "cli",
      runs: RUNS * rounds,
      version_cpu_ms: round(version),
      ls_cpu_ms: round(list),
      node_cpu_ms: round(node),
      version_above_node_ms: round(version - node),
      ls_above_node_ms: round(list - node),
      goal_cpu_ms: 150,
      load_average_1m: round(load),
      cpus: availableParallelism(),
    }),
  );
} finally {
  await d.close();
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}
