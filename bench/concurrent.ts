// W3: 1,000 conversations, one turn each, all at once; the scripted model sleeps 50 ms per call.
import { agentDef, benchRuntime, PeakRss, turnEnd } from "./lib.js";

const CONVERSATIONS = Number(process.argv[2] ?? 1000);
const baseline = process.memoryUsage().rss;
const bench = benchRuntime({ steps: [{ tool_calls: [{ tool: "bench/lookup", args: { id: "x" } }] }, { text: "done" }] }, { delayMs: 50 });
const agent = await bench.runtime.createAgent("default", agentDef("wide"));
const ended = turnEnd(bench.bus, agent.id);
const rss = new PeakRss();
const start = performance.now();
const queued = await Promise.all(Array.from({ length: CONVERSATIONS }, (_, i) => bench.runtime.enqueue(agent, `c${i}`, "go")));
const ends = await Promise.all(queued.map((q) => ended(q.message)));
const seconds = (performance.now() - start) / 1000;
const peak = rss.stop();
const failed = ends.filter((e) => e.type !== "dev.wardrik.turn.completed").length;
console.log(
  JSON.stringify({
    workload: "W3",
    conversations: CONVERSATIONS,
    model_delay_ms: 50,
    seconds: Math.round(seconds * 1000) / 1000,
    peak_rss_mb: peak,
    rss_before_mb: Math.round((baseline / 1024 / 1024) * 10) / 10,
    failed,
  }),
);
await bench.close();
