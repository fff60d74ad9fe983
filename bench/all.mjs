// npm run bench -- all [NAMES...]: runs every workload of the performance goals (or NAMES) once each,
// one after the other, and prints one table of every figure they report (and the JSON lines on stderr).
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { ALL, buildBench, commandOf, runWorkload, table } from "./workloads.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const names = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ALL;
buildBench(here);
const rows = [];
for (const name of names) {
  const argv = commandOf(here, name);
  if (!argv) throw new Error(`unknown workload ${name}`);
  let result;
  try {
    result = runWorkload(here, argv);
  } catch (err) {
    rows.push([name, "error", String(err.message).split("\n").slice(0, 3).join(" ")]);
    continue;
  }
  process.stderr.write(JSON.stringify(result) + "\n");
  for (const [key, value] of Object.entries(result)) {
    if (key !== "workload") rows.push([name, key, typeof value === "object" ? JSON.stringify(value) : value]);
  }
}
console.log(table(["workload", "figure", "value"], rows));
