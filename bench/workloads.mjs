// The benchmark workloads, how each runs, and how their JSON lines print as one table.
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * NAME -> [file, ...args]. A `.js` file runs from bench/dist/ (compiled by `buildBench`): the figures
 * are the product's built JavaScript. A `peers/` file is another framework running the same workload, with its
 * own install (`preparePeer`), nothing of Wardrik. The rest need the test kit or the daemon's sources and run through tsx.
 */
export const WORKLOADS = {
  W1: ["turns.js", "W1"],
  W2: ["turns.js", "W2"],
  W3: ["concurrent.js"],
  W3L: ["concurrent.js", "1000", "4"],
  W4: ["long-conversation.js"],
  "W1-http": ["daemon-turns.js", "W1"],
  "W2-http": ["daemon-turns.js", "W2"],
  "W3-http": ["daemon-concurrent.js"],
  "W4-http": ["daemon-turns.js", "W4"],
  // npm run bench -- load [SECONDS] [CLIENTS] [TURNS_PER_S_PER_CLIENT] [own|own-all|feed|both]
  load: ["load.js"],
  // npm run bench -- fair-share [SECONDS] [A_CLIENTS] [ORG_REQUESTS_PER_S|auto|default] [sqlite|postgres]
  "fair-share": ["fair-share.js"],
  policy: ["policy.ts"],
  tools: ["tools.js"],
  mcp: ["mcp.ts"],
  faults: ["faults.ts"],
  "cluster-faults": ["cluster-faults.ts"],
  recovery: ["recovery.ts"],
  start: ["start.js"],
  // npm run bench -- cli [RUNS]
  cli: ["cli.js"],
  sleep: ["sleep.ts"],
  db: ["db.ts"],
  cluster: ["cluster.ts"],
  webhooks: ["webhooks.ts"],
  // npm run bench -- webhook-client [REQUESTS] [ROUNDS]: the hand-written webhook client against undici (issue #34)
  "webhook-client": ["webhook-client.ts"],
  // npm run bench -- metrics-registry [TURNS] [ROUNDS]: the hand-written /metrics registry against prom-client (issue #34)
  "metrics-registry": ["metrics-registry.ts"],
  telemetry: ["telemetry.js"],
  // npm run bench -- isolation [--seconds N] [--only KIND,KIND]; the kinds are the files of bench/isolation/
  isolation: ["isolation.js"],
  // npm run bench -- peer-langgraph W1|W2|W3 [state-graph|prebuilt] [async|sync|exit]
  "peer-langgraph": ["peers/langgraph/bench.mjs"],
};

/** What `all` runs: every figure of the performance goals. */
export const ALL = ["W1", "W2", "W3", "W4", "W1-http", "W2-http", "W3-http", "W4-http", "tools", "recovery", "sleep"];

/** Folders of bench/ whose .ts files are compiled too (each file a kind of one workload). */
const SOURCE_FOLDERS = [".", "isolation"];

/** Compiles bench/*.ts (and SOURCE_FOLDERS) to bench/dist/ when a source is newer than the output (needs `npm run build` first). */
export function buildBench(benchDir) {
  const stamp = join(benchDir, "dist", "turns.js");
  const newest = Math.max(
    ...SOURCE_FOLDERS.flatMap((folder) =>
      readdirSync(join(benchDir, folder))
        .filter((f) => f.endsWith(".ts"))
        .map((f) => statSync(join(benchDir, folder, f)).mtimeMs),
    ),
  );
  if (existsSync(stamp) && statSync(stamp).mtimeMs >= newest) return;
  const tsc = join(benchDir, "..", "node_modules", "typescript", "bin", "tsc");
  execFileSync(process.execPath, [tsc, "-p", join(benchDir, "tsconfig.json")], { stdio: "inherit" });
}

/** Whether NAME runs another framework (from bench/peers/), not Wardrik. */
export function isPeer(name) {
  return WORKLOADS[name]?.[0].startsWith("peers/") ?? false;
}

/**
 * Installs a peer's folder from its own lockfile (`npm ci`) the first time, and again only when the lockfile
 * changes: the peer is not a workspace, so the product's install never pulls it, and later runs stay offline.
 * npm's output goes to stderr: stdout is the workload's JSON line.
 */
export function preparePeer(benchDir, name) {
  const folder = join(benchDir, dirname(WORKLOADS[name][0]));
  const lock = createHash("sha256")
    .update(readFileSync(join(folder, "package-lock.json")))
    .digest("hex");
  const stamp = join(folder, "node_modules", ".installed-lock-sha256");
  if (existsSync(stamp) && readFileSync(stamp, "utf8") === lock) return;
  process.stderr.write(`installing ${name} in ${folder} (npm ci, once)\n`);
  execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: folder, stdio: ["ignore", 2, 2] });
  writeFileSync(stamp, lock);
}

/** Command line for one workload; `distDir` holds the compiled harness (another tree's, for compare). */
export function commandOf(benchDir, name, distDir = join(benchDir, "dist")) {
  const entry = WORKLOADS[name];
  if (!entry) return undefined;
  const [file, ...args] = entry;
  if (file.endsWith(".js")) return [join(distDir, file), ...args];
  if (file.endsWith(".mjs")) return [join(benchDir, file), ...args];
  return ["--import", "tsx", join(benchDir, file), ...args];
}

/** Runs a workload and returns its last JSON line (throws with its stderr when it fails). */
export function runWorkload(cwd, argv, extra = [], env = process.env) {
  const r = spawnSync(process.execPath, [...argv, ...extra], { cwd, encoding: "utf8", env, maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${argv.join(" ")} failed (${r.status}):\n${r.stderr}`);
  const line = r.stdout.trim().split("\n").at(-1);
  return JSON.parse(line);
}

/** Rows of `| workload | figure | value... |` for every numeric or text figure. */
export function table(headers, rows) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i] ?? "").length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c ?? "").padEnd(widths[i])).join(" | ")} |`;
  return [line(headers), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}
