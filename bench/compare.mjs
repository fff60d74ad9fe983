// npm run bench -- compare REF [NAMES...|all] [--runs N]
// Runs workloads (default W1) on this checkout and on commit REF side by side, alternating, in one run,
// and prints the medians of every figure and their ratio (current / REF) as one table, then one JSON line.
// REF is built in a temporary git worktree with its own install. Both sides run THIS checkout's harness
// (bench/dist copied into REF's tree, resolving REF's packages), so the workloads are the same; when the
// harness cannot drive REF's in-process API, REF's own bench file runs instead (marked `ref_harness: own`).
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ALL, buildBench, commandOf, isPeer, runWorkload, table, WORKLOADS } from "./workloads.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const args = process.argv.slice(2);
const runsAt = args.indexOf("--runs");
const runs = runsAt >= 0 ? Number(args.splice(runsAt, 2)[1]) : 5;
const [ref, ...rawNames] = args;
const names = rawNames.length === 0 ? ["W1"] : rawNames.flatMap((n) => (n === "all" ? ALL : [n]));
if (names.some(isPeer)) {
  // A peer's figures do not depend on the commit: run it on its own next to a Wardrik workload instead.
  console.error(`compare runs Wardrik at two commits; ${names.filter(isPeer).join(", ")} is another framework: npm run bench -- NAME W1`);
  process.exit(2);
}
if (!ref || !Number.isInteger(runs) || runs < 1 || names.some((n) => !WORKLOADS[n])) {
  console.error(`usage: npm run bench -- compare REF [${Object.keys(WORKLOADS).join("|")}|all ...] [--runs N]`);
  process.exit(2);
}

buildBench(here);
const dir = mkdtempSync(join(tmpdir(), "wardrik-compare-"));
const quiet = { stdio: ["ignore", "ignore", "inherit"] };
try {
  execFileSync("git", ["-C", root, "worktree", "add", "--detach", dir, ref], quiet);
  execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: dir, ...quiet });
  execFileSync("npm", ["run", "build"], { cwd: dir, ...quiet });
  const refDist = join(dir, "bench", "dist-current");
  cpSync(join(here, "dist"), refDist, { recursive: true });
  const rows = [];
  const summary = {};
  for (const name of names) {
    const results = { current: [], ref: [] };
    // The tsx workloads import the test kit of their own tree, so REF runs its own file of them.
    let refHarness = WORKLOADS[name][0].endsWith(".ts") ? "own" : "current";
    for (let i = 0; i < runs; i++) {
      // Alternate which goes first, so drift in the machine's load falls on both.
      const order = i % 2 === 0 ? ["current", "ref"] : ["ref", "current"];
      for (const which of order) {
        if (which === "current") results.current.push(runWorkload(root, commandOf(here, name)));
        else {
          const refEnv = { ...process.env, WARDRIK_BENCH_ROOT: dir };
          if (refHarness === "current") {
            try {
              results.ref.push(runWorkload(dir, commandOf(here, name, refDist), [], refEnv));
              continue;
            } catch (err) {
              process.stderr.write(`this harness cannot run ${name} on ${ref}; using its own bench file (${err.message.split("\n")[0]})\n`);
              refHarness = "own";
            }
          }
          const [file, ...wargs] = WORKLOADS[name];
          const own = join(dir, "bench", file.replace(/\.js$/, ".ts"));
          if (!existsSync(own)) throw new Error(`${ref} has no bench/${file.replace(/\.js$/, ".ts")}`);
          results.ref.push(runWorkload(dir, ["--import", "tsx", own, ...wargs], [], refEnv));
        }
      }
    }
    const keys = Object.keys(results.current[0]).filter((k) => typeof results.current[0][k] === "number");
    summary[name] = { ref_harness: refHarness };
    for (const key of keys) {
      const cur = median(results.current.map((r) => r[key]));
      const old = median(results.ref.map((r) => r[key]));
      const ratio = typeof cur === "number" && typeof old === "number" && old !== 0 ? Math.round((cur / old) * 100) / 100 : null;
      const spread = (xs) => {
        const v = xs.map((r) => r[key]).filter((x) => typeof x === "number");
        return v.length ? `${Math.min(...v)}..${Math.max(...v)}` : "";
      };
      rows.push([name, key, cur, spread(results.current), old, spread(results.ref), ratio]);
      summary[name][key] = { current: cur, ref: old, ratio };
    }
  }
  console.log(table(["workload", "figure", "current", "current range", `ref ${ref}`, "ref range", "ratio"], rows));
  console.log(JSON.stringify({ ref, runs, results: summary }));
} finally {
  spawnSync("git", ["-C", root, "worktree", "remove", "--force", dir], quiet);
  rmSync(dir, { recursive: true, force: true });
}

function median(xs) {
  const sorted = xs.filter((v) => typeof v === "number").sort((a, b) => a - b);
  return sorted.length === 0 ? null : sorted[Math.floor(sorted.length / 2)];
}
