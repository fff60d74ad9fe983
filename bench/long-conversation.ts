// W4: one conversation, 500 turns in a row, one tool call each. Does a turn get slower as history grows?
import { agentDef, benchRuntime, percentile, turnEnd } from "./lib.js";

const TURNS = 500;
const bench = benchRuntime({ steps: [{ tool_calls: [{ tool: "bench/lookup", args: { id: "x" } }] }, { text: "done" }] });
const agent = await bench.runtime.createAgent("default", agentDef("long"));
const ended = turnEnd(bench.bus, agent.id);
// Warm up on another conversation so the first measured turns are not JIT-cold.
for (let i = 0; i < 50; i++) await ended((await bench.runtime.enqueue(agent, "warm", "go")).message);

const times: number[] = [];
for (let i = 0; i < TURNS; i++) {
  const t0 = performance.now();
  const q = await bench.runtime.enqueue(agent, "main", `turn ${i}`);
  const end = await ended(q.message);
  if (end.type !== "dev.wardrik.turn.completed") throw new Error(JSON.stringify(end.data));
  times.push(performance.now() - t0);
}
const p50 = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );
const first = p50(times.slice(0, 50));
const last = p50(times.slice(450, 500));
console.log(
  JSON.stringify({
    workload: "W4",
    turns: TURNS,
    p50_first50_ms: Math.round(first * 1000) / 1000,
    p50_last50_ms: Math.round(last * 1000) / 1000,
    ratio: Math.round((last / first) * 100) / 100,
  }),
);
await bench.close();
