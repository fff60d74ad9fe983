/**
 * `npm run bench -- cli [RUNS]`: the CPU and the modules each CLI command costs.
 *
 * The built daemon runs in a project made by `wardrik init`; each command is
 * spawned RUNS times (default 5) in each of 3 rounds, and its CPU time (user +
 * system) is read from this process's count of its ended children
 * (/proc/self/stat cutime + cstime), so nothing is added to the command
 * measured. Beside them, a bare `node -e 0` (Node's own start, which no
 * command can go below) in the same rounds. The commands that talk to the
 * daemon run in the project against the running daemon, after one unmeasured
 * `wardrik ls` (the CLI's memo of config.yaml written). One more run of each
 * command, not timed, counts the modules it loads (ESM and CommonJS, Node's
 * built-ins apart) with the tests' module recorder: files, so each chunk of
 * the bundle bin/wardrik.js runs (dist/bundle/) counts once.
 *
 * Goal (#32): at most 150 ms for `--version` and `ls`; on a busy machine
 * Node's own start moves most, so `*_above_node_ms` is printed too.
 * NODE_EXTRA_CA_CERTS, when this environment sets it, makes every Node process
 * read and parse that certificate file as it starts, before any JavaScript
 * (about 45 ms of CPU on the shared test machine, whose environment sets it):
 * node, --version and ls are then measured in the same rounds without it too
 * (`without_extra_ca_certs`), as a shell that does not set it starts them.
 * WARDRIK_BENCH_ROOT measures another checkout's build with this harness.
 *
 * Prints one JSON line.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { BIN, benchProject, endedChildrenCpuMs, startDaemon } from "./daemon-kit.js";

const RUNS = Number(process.argv[2] ?? 5);
const ROUNDS = 3;
const here = dirname(fileURLToPath(import.meta.url));
const RECORDER = join(here, "..", "..", "packages", "daemon", "test", "e2e", "fixtures", "record-modules.mjs");
const scratch = mkdtempSync(join(tmpdir(), "wardrik-bench-cli-"));

/** A command measured: its arguments for run `i` (init needs a new directory each time), and where it runs. */
interface Measured {
  args: (i: number) => string[];
  inProject: boolean;
}

const fixed = (...args: string[]): Measured => ({ args: () => args, inProject: true });
let inits = 0;

/** Every command a user types that ends by itself, with arguments that succeed in the bench project. */
const COMMANDS: Record<string, Measured> = {
  node: { args: () => ["-e", "0"], inProject: false },
  "--version": { args: () => [BIN, "--version"], inProject: false },
  "--help": { args: () => [BIN, "--help"], inProject: false },
  init: { args: () => [BIN, "init", join(scratch, `p${++inits}`)], inProject: false },
  "schema config": { args: () => [BIN, "schema", "config"], inProject: false },
  "completion bash": { args: () => [BIN, "completion", "bash"], inProject: false },
  ls: fixed(BIN, "ls"),
  "agent show": fixed(BIN, "agent", "show", "bench"),
  tools: fixed(BIN, "tools", "bench"),
  // Before history and events: they read the conversation it leaves.
  ask: fixed(BIN, "ask", "hello", "hi"),
  history: fixed(BIN, "history", "hello"),
  events: fixed(BIN, "events", "hello"),
  deliveries: fixed(BIN, "deliveries"),
  nodes: fixed(BIN, "nodes"),
  reload: fixed(BIN, "reload"),
  token: fixed(BIN, "token", "default"),
  "secret ls": fixed(BIN, "secret", "ls"),
  "mcp ls": fixed(BIN, "mcp", "ls"),
  console: fixed(BIN, "console", "--no-open"),
};

/** Runs one command once; throws when it fails. */
function runOnce(cmd: Measured, i: number, cwd: string, env: NodeJS.ProcessEnv): void {
  const argv = cmd.args(i);
  const r = spawnSync(process.execPath, argv, { cwd, env, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${argv.join(" ")} failed (${r.status}): ${r.stderr}`);
}

/** Mean CPU ms of one command run RUNS times. */
function cpuPerRun(cmd: Measured, cwd: string, env: NodeJS.ProcessEnv): number {
  const before = endedChildrenCpuMs();
  for (let i = 0; i < RUNS; i++) runOnce(cmd, i, cwd, env);
  return (endedChildrenCpuMs() - before) / RUNS;
}

/** The modules one run loads: files and packages, not Node's built-ins. */
function modulesOf(cmd: Measured, cwd: string, env: NodeJS.ProcessEnv): number {
  const log = join(scratch, "modules.txt");
  rmSync(log, { force: true });
  runOnce(cmd, 0, cwd, { ...env, NODE_OPTIONS: `--import=${RECORDER}`, WARDRIK_MODULE_LOG: log });
  const loaded = new Set(
    readFileSync(log, "utf8")
      .split("\n")
      .filter((m) => m.startsWith("file:")),
  );
  // The recorder itself and its hook.
  return [...loaded].filter((m) => !m.includes("/record-modules")).length;
}

const hello = {
  "agents/hello.md": "---\ndescription: Says hello.\nmodel: hello\n---\nYou greet.\n",
  "scripts/hello.yaml": 'steps:\n  - text: "hello"\n',
};
const d = await startDaemon(
  { ...benchProject({ calls: 1 }), ...hello },
  { config: (c) => c.replace(/^models:[ \t]*\n/m, "models:\n  hello: { provider: script, model: hello }\n") },
);
try {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_OPTIONS;
  delete env.WARDRIK_URL;
  delete env.WARDRIK_TOKEN;
  // Unmeasured: the first command after config.yaml changes reads it in full and remembers it.
  runOnce(COMMANDS.ls!, 0, d.dir, env);
  const load = loadavg()[0]!;
  const names = Object.keys(COMMANDS);
  const withoutCa: NodeJS.ProcessEnv = { ...env };
  delete withoutCa.NODE_EXTRA_CA_CERTS;
  const caNames = env.NODE_EXTRA_CA_CERTS ? ["node", "--version", "ls"] : [];
  // Interleaved in rounds, so a change in the machine's load falls on every command.
  const cpu = Object.fromEntries(names.map((n) => [n, 0]));
  const cpuWithoutCa = Object.fromEntries(caNames.map((n) => [n, 0]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const n of names) cpu[n]! += cpuPerRun(COMMANDS[n]!, COMMANDS[n]!.inProject ? d.dir : scratch, env) / ROUNDS;
    for (const n of caNames) cpuWithoutCa[n]! += cpuPerRun(COMMANDS[n]!, COMMANDS[n]!.inProject ? d.dir : scratch, withoutCa) / ROUNDS;
  }
  const commands = Object.fromEntries(
    names
      .filter((n) => n !== "node")
      .map((n) => [n, { cpu_ms: round(cpu[n]!), modules: modulesOf(COMMANDS[n]!, COMMANDS[n]!.inProject ? d.dir : scratch, env) }]),
  );
  const node = cpu.node!;
  console.log(
    JSON.stringify({
      workload: "cli",
      runs: RUNS * ROUNDS,
      version_cpu_ms: round(cpu["--version"]!),
      ls_cpu_ms: round(cpu.ls!),
      node_cpu_ms: round(node),
      version_above_node_ms: round(cpu["--version"]! - node),
      ls_above_node_ms: round(cpu.ls! - node),
      goal_cpu_ms: 150,
      ...(caNames.length > 0
        ? {
            without_extra_ca_certs: {
              node_cpu_ms: round(cpuWithoutCa.node!),
              version_cpu_ms: round(cpuWithoutCa["--version"]!),
              ls_cpu_ms: round(cpuWithoutCa.ls!),
              version_above_node_ms: round(cpuWithoutCa["--version"]! - cpuWithoutCa.node!),
              ls_above_node_ms: round(cpuWithoutCa.ls! - cpuWithoutCa.node!),
            },
          }
        : {}),
      commands,
      load_average_1m: round(load),
      cpus: availableParallelism(),
    }),
  );
} finally {
  await d.close();
  rmSync(scratch, { recursive: true, force: true });
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}
