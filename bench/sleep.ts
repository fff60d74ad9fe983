/**
 * `npm run bench -- sleep [AGENTS]` (after `npm run build`): what sleeping agents cost.
 *
 * The built daemon in a fresh project. First its RSS while empty (no agents:
 * the init template's agent is removed). Then AGENTS (default
 * 10,000) agents are created through POST /v1/agents (model script/echo,
 * idle_timeout 1 s), each is sent one message, and once every agent reports
 * status `asleep` (GET /v1/agents) and 20 s more have passed (WARDRIK_BENCH_SETTLE_MS;
 * the same wait precedes the empty reading), the RSS again.
 * RSS is VmRSS from /proc/PID/status (Linux); VmHWM gives the peak. Each
 * reading is the least of one a second over its wait: V8 gives back freed
 * heap at a moment of its own choosing, so a single reading of the same
 * empty daemon came out 88 or 106 MB from run to run. `*_last_mb` are the
 * readings at the wait's end.
 *
 * WARDRIK_BENCH_DAEMON_NODE_OPTIONS passes Node flags to the daemon (for
 * diagnosis, e.g. "--max-semi-space-size=1" to see how much of the delta is
 * the young generation grown during the burst); by default it runs as users run it.
 *
 * Afterwards (not counted) it checks that every agent answered its message
 * with exactly one completed turn and fell asleep (agent.asleep).
 *
 * Prints one JSON line:
 * {"workload":"sleep","agents":N,"rss_empty_mb":..,"rss_asleep_mb":..,"delta_mb":..,...}
 * Target: delta_mb under 50.
 */
import { readFileSync } from "node:fs";
import { api, waitUntil } from "../packages/daemon/test/faults/fault-api.js";
import { standaloneProject, type StandaloneProject } from "../packages/daemon/test/faults/standalone-project.js";
import { sleep } from "../packages/daemon/test/helpers/wait.js";

const AGENTS = Number(process.argv[2] ?? 10_000);
const IN_FLIGHT = 32;
const SETTLE_MS = Number(process.env.WARDRIK_BENCH_SETTLE_MS ?? 20_000);

function status(pid: number, field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Math.round((Number(m[1]) / 1024) * 10) / 10;
}

/** VmRSS once a second over SETTLE_MS: the least reading, and the last. */
async function settledRss(pid: number): Promise<{ least: number; last: number }> {
  let least = Infinity;
  let last = 0;
  for (let waited = 0; waited < SETTLE_MS; waited += 1000) {
    await sleep(Math.min(1000, SETTLE_MS - waited));
    last = status(pid, "VmRSS");
    least = Math.min(least, last);
  }
  return { least, last };
}

async function lanes(count: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(IN_FLIGHT, count) }, async () => {
      while (next < count) await fn(next++);
    }),
  );
}

async function listStatuses(p: StandaloneProject): Promise<Map<string, { id: string; status: string }>> {
  const out = new Map<string, { id: string; status: string }>();
  // GET /v1/agents pages: follow `next` to the end.
  for (let cursor: string | null = null; ;) {
    const query: string = cursor ? `?limit=1000&cursor=${encodeURIComponent(cursor)}` : "?limit=1000";
    const r = await api<{ agents: { id: string; name: string; status: string }[]; next: string | null }>(p, "GET", `/v1/agents${query}`);
    for (const a of r.agents) out.set(a.name, { id: a.id, status: a.status });
    if (!r.next) return out;
    cursor = r.next;
  }
}

const nodeOptions = process.env.WARDRIK_BENCH_DAEMON_NODE_OPTIONS;
const project = await standaloneProject({ files: {}, scripts: {}, ...(nodeOptions ? { env: { NODE_OPTIONS: nodeOptions } } : {}) });
try {
  await project.start();
  const pid = project.pid!;
  const empty = await settledRss(pid);

  const t0 = performance.now();
  const ids: string[] = new Array<string>(AGENTS);
  await lanes(AGENTS, async (i) => {
    const a = await api<{ id: string }>(project, "POST", "/v1/agents", {
      name: `sleeper-${i}`,
      description: "Answers one message, then sleeps.",
      model: "script/echo",
      idle_timeout: 1,
    });
    ids[i] = a.id;
  });
  const createdS = (performance.now() - t0) / 1000;
  await lanes(AGENTS, async (i) => {
    await api(project, "POST", `/v1/agents/${ids[i]}/messages`, { text: `hello ${i}` });
  });
  const sentS = (performance.now() - t0) / 1000;

  const asleep = await waitUntil(
    async () => {
      const all = await listStatuses(project);
      const n = [...all.values()].filter((a) => a.status === "asleep").length;
      return n === AGENTS && all.size === AGENTS ? n : undefined;
    },
    `all ${AGENTS} agents to report asleep`,
    600_000,
    1000,
  );
  const asleepS = (performance.now() - t0) / 1000;
  const asleepRss = await settledRss(pid);
  const rssPeak = status(pid, "VmHWM");
  if (project.pid !== pid) throw new Error("the daemon restarted during the run");

  // Not measured: each agent answered exactly one message and fell asleep.
  let answered = 0;
  let fellAsleep = 0;
  await lanes(AGENTS, async (i) => {
    const r = await api<{ events: { type: string; data: Record<string, unknown> }[] }>(
      project,
      "GET",
      `/v1/agents/${ids[i]}/events?type=turn.completed,agent.asleep&limit=100`,
    );
    const done = r.events.filter((e) => e.type.endsWith("turn.completed"));
    if (done.length === 1 && done[0]!.data.reply === `You said: hello ${i}`) answered += 1;
    if (r.events.some((e) => e.type.endsWith("agent.asleep"))) fellAsleep += 1;
  });

  console.log(
    JSON.stringify({
      workload: "sleep",
      agents: AGENTS,
      rss_empty_mb: empty.least,
      rss_asleep_mb: asleepRss.least,
      delta_mb: Math.round((asleepRss.least - empty.least) * 10) / 10,
      rss_empty_last_mb: empty.last,
      rss_asleep_last_mb: asleepRss.last,
      delta_last_mb: Math.round((asleepRss.last - empty.last) * 10) / 10,
      rss_peak_mb: rssPeak,
      asleep,
      answered,
      agent_asleep_events: fellAsleep,
      seconds_to_create: Number(createdS.toFixed(1)),
      seconds_to_send: Number((sentS - createdS).toFixed(1)),
      seconds_to_all_asleep: Number((asleepS - sentS).toFixed(1)),
      ...(nodeOptions ? { daemon_node_options: nodeOptions } : {}),
    }),
  );
} finally {
  await project.dispose();
}
