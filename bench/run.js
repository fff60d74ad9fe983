// npm run bench -- NAME [args] | all | compare REF [NAMES...] [--runs N]
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildBench, commandOf, isPeer, preparePeer, WORKLOADS } from "./workloads.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const [name, ...rest] = process.argv.slice(2);
if (name === "compare" || name === "all") {
  const r = spawnSync(process.execPath, [join(here, `${name}.mjs`), ...rest], { stdio: "inherit" });
  process.exit(r.status ?? 1);
}
const argv = commandOf(here, name);
if (!argv) {
  console.error(`usage: npm run bench -- <${Object.keys(WORKLOADS).join("|")}|all|compare REF [NAMES...]> [args]`);
  process.exit(2);
}
// A peer runs nothing of Wardrik's: it needs its own install, not the product's build.
if (isPeer(name)) preparePeer(here, name);
else buildBench(here);
const r = spawnSync(process.execPath, [...argv, ...rest], { stdio: "inherit" });
process.exit(r.status ?? 1);
