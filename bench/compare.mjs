// npm run bench -- compare REF [WORKLOAD] [--runs N]
// Runs a workload on this checkout and on commit REF side by side, alternating, in one run, and prints
// the medians and their ratio as JSON. REF is built in a temporary git worktree with its own install.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const runsAt = args.indexOf("--runs");
const runs = runsAt >= 0 ? Number(args.splice(runsAt, 2)[1]) : 5;
const [ref, workload = "W1"] = args;
if (!ref || !Number.isInteger(runs) || runs < 1) {
  console.error("usage: npm run bench -- compare REF [W1|W2] [--runs N]");
  process.exit(2);
}

const dir = mkdtempSync(join(tmpdir(), "wardrik-compare-"));
const quiet = { stdio: ["ignore", "ignore", "inherit"] };
try {
  execFileSync("git", ["-C", root, "worktree", "add", "--detach", dir, ref], quiet);
  execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: dir, ...quiet });
  execFileSync("npm", ["run", "build"], { cwd: dir, ...quiet });
  const results = { current: [], ref: [] };
  for (let i = 0; i < runs; i++) {
    // Alternate which goes first, so drift in the machine's load falls on both.
    const order = i % 2 === 0 ? ["current", "ref"] : ["ref", "current"];
    for (const which of order) results[which].push(runOnce(which === "current" ? root : dir, workload));
  }
  const median = (xs, key) => {
    const sorted = xs
      .map((x) => x[key])
      .filter((v) => typeof v === "number")
      .sort((a, b) => a - b);
    return sorted.length === 0 ? null : sorted[Math.floor(sorted.length / 2)];
  };
  const summary = (xs) => ({
    turns_per_s: median(xs, "turns_per_s"),
    p99_ms: median(xs, "p99_ms"),
    statements_per_turn: median(xs, "statements_per_turn"),
    commits_per_turn: median(xs, "commits_per_turn"),
  });
  const current = summary(results.current);
  const before = summary(results.ref);
  console.log(
    JSON.stringify({
      workload,
      ref,
      runs,
      current,
      ref_result: before,
      turns_per_s_ratio: before.turns_per_s ? Math.round((current.turns_per_s / before.turns_per_s) * 100) / 100 : null,
    }),
  );
} finally {
  spawnSync("git", ["-C", root, "worktree", "remove", "--force", dir], quiet);
  rmSync(dir, { recursive: true, force: true });
}

function runOnce(cwd, name) {
  const r = spawnSync(process.execPath, ["--import", "tsx", join(cwd, "bench", "turns.ts"), name], { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`bench in ${cwd} failed: ${r.stderr}`);
  const line = r.stdout.trim().split("\n").at(-1);
  return JSON.parse(line);
}
