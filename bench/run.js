// npm run bench -- NAME [args]: runs bench/<file>.ts for a workload and prints its JSON line(s).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const workloads = {
  W1: ["turns.ts", "W1"],
  W2: ["turns.ts", "W2"],
  W3: ["concurrent.ts"],
  W3L: ["concurrent.ts", "1000", "4"],
  W4: ["long-conversation.ts"],
  policy: ["policy.ts"],
  tools: ["tools.ts"],
  mcp: ["mcp.ts"],
  faults: ["faults.ts"],
  recovery: ["recovery.ts"],
  sleep: ["sleep.ts"],
  db: ["db.ts"],
  cluster: ["cluster.ts"],
  telemetry: ["telemetry.ts"],
};
const [name, ...rest] = process.argv.slice(2);
if (name === "compare") {
  const r = spawnSync(process.execPath, [join(here, "compare.mjs"), ...rest], { stdio: "inherit" });
  process.exit(r.status ?? 1);
}
const entry = workloads[name];
if (!entry) {
  console.error(`usage: npm run bench -- <${Object.keys(workloads).join("|")}|compare REF> [args]`);
  process.exit(2);
}
const [file, ...args] = entry;
if (!existsSync(join(here, file))) {
  console.error(`bench/${file} does not exist yet`);
  process.exit(2);
}
const r = spawnSync(process.execPath, ["--import", "tsx", join(here, file), ...args, ...rest], { stdio: "inherit" });
process.exit(r.status ?? 1);
