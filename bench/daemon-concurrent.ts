// W3 through the daemon: 1,000 conversations at once, one turn each, the scripted model sleeping 50 ms a
// call, the tool in an SDK worker; the client posts every message over HTTP and waits on the SSE stream.
import { benchProject, startDaemon, turnEnds } from "./daemon-kit.js";

const CONVERSATIONS = Number(process.argv[2] ?? 1000);
const IN_FLIGHT_POSTS = 64;
const d = await startDaemon(benchProject({ calls: 1, delayMs: 50 }), { worker: true });
try {
  const agent = await d.agentId("bench");
  const turns = turnEnds(d, agent);
  const rssBefore = d.rssMb().now;
  const cpu0 = d.cpuMs();
  const start = performance.now();
  const ends: Promise<{ type: string }>[] = [];
  let next = 0;
  // Posted by 64 lanes at once: what a busy front end sends; undici would otherwise open 1,000 sockets.
  await Promise.all(
    Array.from({ length: IN_FLIGHT_POSTS }, async () => {
      while (next < CONVERSATIONS) {
        const i = next++;
        const q = await d.client.sendMessage(agent, "go", `c${i}`);
        ends.push(turns.ended(q.message));
      }
    }),
  );
  const results = await Promise.all(ends);
  const seconds = (performance.now() - start) / 1000;
  const cpu = d.cpuMs() - cpu0;
  turns.stop();
  const rss = d.rssMb();
  console.log(
    JSON.stringify({
      workload: "W3-http",
      conversations: CONVERSATIONS,
      model_delay_ms: 50,
      seconds: Math.round(seconds * 1000) / 1000,
      daemon_cpu_ms_per_turn: Math.round((cpu / CONVERSATIONS) * 1000) / 1000,
      daemon_rss_before_mb: rssBefore,
      daemon_peak_rss_mb: rss.peak,
      daemon_start_s: Math.round(d.startSeconds * 1000) / 1000,
      failed: results.filter((e) => !e.type.endsWith(".turn.completed")).length,
    }),
  );
} finally {
  await d.close();
}
