/**
 * `npm run fuzz -- --seconds N --seed S`: fuzzes a real daemon (HTTP routes
 * from its OpenAPI document, the worker protocol, the MCP endpoint, Slack and
 * inbound webhooks) for N seconds (default 30) from seed S (default: the
 * time). Prints the report as JSON; exits 1 when something crashed (a 5xx, a
 * dropped connection, no answer, the daemon dying). `--trace` prints every
 * exchange on stderr; `--exchanges N` stops after N, to replay the start of a
 * seed's run. Needs `npm run build`.
 */
import type { Outcome } from "./exchange.js";
import { crashed, runFuzz } from "./run-fuzz.js";

const args = process.argv.slice(2);
const option = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const value = Number(args[i + 1]);
  if (!Number.isInteger(value) || value < 0) {
    process.stderr.write(`${name} takes a whole number, not ${JSON.stringify(args[i + 1] ?? "")}\n`);
    process.exit(2);
  }
  return value;
};

const trace = args.includes("--trace")
  ? (o: Outcome, n: number) => process.stderr.write(`${n} ${o.target} ${o.request} -> ${o.status}${o.crash ? ` CRASH ${o.crash}` : ""}\n`)
  : undefined;
const report = await runFuzz({
  seconds: option("--seconds", 30),
  seed: option("--seed", Date.now() % 2 ** 31),
  ...(trace ? { trace } : {}),
  ...(args.includes("--exchanges") ? { maxExchanges: option("--exchanges", 0) } : {}),
});
console.log(JSON.stringify(report, null, 2));
process.exit(crashed(report) ? 1 : 0);
