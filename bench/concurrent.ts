// W3: 1,000 conversations, one turn each, all at once; the scripted model sleeps 50 ms per call.
// Also prints how long the event loop was held up meanwhile (p99 and max of its delay).
// `npm run bench -- W3 [CONVERSATIONS] [LARGE]`: LARGE more conversations, of an agent with a
// 4,000-token window, each get a 1,000,000-character message at the same time (W3L: 1,000 and 4).
import { monitorEventLoopDelay } from "node:perf_hooks";
import { agentDef, benchRuntime, PeakRss, turnEnd } from "./lib.js";

const CONVERSATIONS = Number(process.argv[2] ?? 1000);
const LARGE = Number(process.argv[3] ?? 0);
const baseline = process.memoryUsage().rss;
const bench = benchRuntime({ steps: [{ tool_calls: [{ tool: "bench/lookup", args: { id: "x" } }] }, { text: "done" }] }, { delayMs: 50 });
const agent = await bench.runtime.createAgent("default", agentDef("wide"));
const reader = await bench.runtime.createAgent("default", { ...agentDef("reader"), context_window: 4000 });
const ended = turnEnd(bench.bus, agent.id);
const readerEnded = turnEnd(bench.bus, reader.id);
// A first turn in each large conversation, so compaction has something to fold when the large message comes.
await Promise.all(
  Array.from({ length: LARGE }, async (_, i) => readerEnded((await bench.runtime.enqueue(reader, `large${i}`, "hello")).message)),
);
const shapes = ["😀", "漢字仮名交じり文", "wardrik", "Lorem ipsum dolor sit amet. "];
const large = Array.from({ length: LARGE }, (_, i) => shapes[i % shapes.length]!.repeat(1_000_000).slice(0, 1_000_000));

const rss = new PeakRss();
const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
const start = performance.now();
const [queued, queuedLarge] = await Promise.all([
  Promise.all(Array.from({ length: CONVERSATIONS }, (_, i) => bench.runtime.enqueue(agent, `c${i}`, "go"))),
  Promise.all(large.map((text, i) => bench.runtime.enqueue(reader, `large${i}`, text))),
]);
const [ends, endsLarge] = await Promise.all([
  Promise.all(queued.map((q) => ended(q.message))),
  Promise.all(queuedLarge.map((q) => readerEnded(q.message))),
]);
const seconds = (performance.now() - start) / 1000;
loop.disable();
const peak = rss.stop();
const failed = [...ends, ...endsLarge].filter((e) => e.type !== "dev.wardrik.turn.completed").length;
const ms = (ns: number) => Math.round(ns / 1e4) / 100;
console.log(
  JSON.stringify({
    workload: LARGE > 0 ? "W3L" : "W3",
    conversations: CONVERSATIONS,
    large_messages: LARGE,
    model_delay_ms: 50,
    seconds: Math.round(seconds * 1000) / 1000,
    event_loop_delay_p99_ms: ms(loop.percentile(99)),
    event_loop_delay_max_ms: ms(loop.max),
    peak_rss_mb: peak,
    rss_before_mb: Math.round((baseline / 1024 / 1024) * 10) / 10,
    failed,
  }),
);
await bench.close();
