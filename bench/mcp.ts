/**
 * `npx tsx bench/mcp.ts`: server-everything from npm over stdio, its `echo`
 * tool (read-only, answers at once) called 2,000 times through McpToolset,
 * 16 in flight. Prints one JSON line: calls per second and p50/p99 latency
 * from `call()` to its outcome (JSON-RPC over the pipe, result conversion).
 */
import { createRequire } from "node:module";
import { percentile } from "./lib.js";
import type { ToolCallContext } from "wardrik";

// A deep path (as bench/tools.ts does) until the package's index exports McpToolset.
const { McpToolset } = await import("wardrik");

const CALLS = Number(process.env.WARDRIK_BENCH_CALLS ?? 2_000);
const WARMUP = 200;
const IN_FLIGHT = 16;

const everythingPath = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/dist/index.js");
const toolset = new McpToolset("everything", { command: process.execPath, args: [everythingPath, "stdio"] });
const scope = { org: "bench", agentId: "agt_bench" };
const tools = await toolset.list(scope);
if (!tools.some((t) => t.name === "everything/echo" && t.readOnly))
  throw new Error(`server-everything offers no read-only echo: ${JSON.stringify(toolset.status(scope))}`);

let seq = 0;
async function call(): Promise<number> {
  seq += 1;
  const ctx: ToolCallContext = {
    agent: scope.agentId,
    org: scope.org,
    run: "run_bench",
    callId: `call_${seq}`,
    idempotencyKey: `key_${seq}`,
    attempt: 1,
    // One controller per call, as the runtime does (the SDK keeps a listener on the signal).
    signal: new AbortController().signal,
    cost: () => {},
    timeoutMs: 60_000,
  };
  const start = performance.now();
  const outcome = await toolset.call("echo", { message: `ping ${seq}` }, ctx);
  if (!outcome.ok) throw new Error(`call failed: ${outcome.error}`);
  return performance.now() - start;
}

async function run(count: number): Promise<number[]> {
  const latencies: number[] = [];
  let started = 0;
  const lane = async () => {
    while (started < count) {
      started += 1;
      latencies.push(await call());
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  return latencies;
}

await run(WARMUP);
const t0 = performance.now();
const latencies = await run(CALLS);
const seconds = (performance.now() - t0) / 1000;
latencies.sort((a, b) => a - b);
await toolset.close();

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
console.log(
  JSON.stringify({
    workload: "mcp",
    calls: CALLS,
    seconds: round(seconds, 3),
    calls_per_s: Math.round(CALLS / seconds),
    p50_ms: round(percentile(latencies, 50)),
    p99_ms: round(percentile(latencies, 99)),
  }),
);
