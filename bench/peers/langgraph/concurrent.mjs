// W3 on LangGraph.js, as bench/concurrent.ts measures Wardrik: 1,000 conversations, one turn each, all at
// once, the model sleeping 50 ms per call; wall time, event-loop delay and peak RSS of the process.
import { monitorEventLoopDelay } from "node:perf_hooks";
import { PeakRss } from "./measure.mjs";
import { openPeerAgent, peerInfo } from "./peer-agent.mjs";

export async function runConcurrent({ kind, durability }, conversations = 1000) {
  const baseline = process.memoryUsage().rss;
  const peer = openPeerAgent({ kind, durability, calls: 1, delayMs: 50 });
  const rss = new PeakRss();
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const start = performance.now();
  const threads = Array.from({ length: conversations }, (_, i) => `c${i}`);
  const ends = await Promise.allSettled(threads.map((t) => peer.turn(t, 1)));
  const seconds = (performance.now() - start) / 1000;
  loop.disable();
  const peak = rss.stop();
  const failures = ends.filter((e) => e.status === "rejected");
  if (failures.length > 0) throw new Error(`${failures.length} of ${conversations} turns failed; the first: ${failures[0].reason?.stack}`);
  await peer.checkHistory(threads, 1);
  const ms = (ns) => Math.round(ns / 1e4) / 100;
  console.log(
    JSON.stringify({
      workload: "W3",
      ...peerInfo(kind, durability),
      conversations,
      large_messages: 0,
      model_delay_ms: 50,
      seconds: Math.round(seconds * 1000) / 1000,
      event_loop_delay_p99_ms: ms(loop.percentile(99)),
      event_loop_delay_max_ms: ms(loop.max),
      peak_rss_mb: peak,
      rss_before_mb: Math.round((baseline / 1024 / 1024) * 10) / 10,
      failed: failures.length,
    }),
  );
  peer.close();
}
