/**
 * `npm run bench -- isolation [--seconds N] [--only KIND,KIND]`: whether one
 * org's hostile input slows another org down.
 *
 * One daemon (the built `wardrik` binary, SQLite) with two orgs. For each
 * kind of input (a file in bench/isolation/), a prober process of another
 * org asks GET /v1/agents in a loop (10 ms apart) while a hostile client of
 * org `default` sends that input again and again for N seconds (default 5,
 * at least one pass). The prober's latencies per kind are the result:
 * p50/p99/max in ms. Target: max under 1,000 ms, p99 under 250 ms.
 *
 * Prints one JSON line: `{ bench, seconds_per_kind, target, kinds: { NAME: { p50_ms, p99_ms, max_ms, probes,
 * failed_probes, passes, daemon_cpu_ms_per_pass, hostile, daemon_alive } } }` (the CPU time includes the prober's
 * requests). On a machine shared with other work the
 * figures move a lot: compare runs made under the same load.
 */
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startDaemon } from "./daemon-kit.js";
import { startProber, type HostileTally, type IsolationDaemon, type IsolationKind, type ProjectDraft } from "./isolation-kit.js";
import { percentile } from "./lib.js";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const SECONDS = Number(option("--seconds") ?? 5);
const only = option("--only")?.split(",");

const kinds: IsolationKind[] = [];
for (const file of readdirSync(join(here, "isolation")).sort()) {
  if (!file.endsWith(".js")) continue;
  const { kind } = (await import(join(here, "isolation", file))) as { kind: IsolationKind };
  if (!only || only.includes(kind.name)) kinds.push(kind);
}
if (kinds.length === 0) throw new Error(`no kind matches --only ${only?.join(",")}`);

const draft: ProjectDraft = { files: {}, models: {}, config: [] };
for (const k of kinds) await k.prepare?.(draft);
const config = [
  "org: default",
  "listen: 127.0.0.1:7373",
  "database: sqlite:.wardrik/wardrik.db",
  "models:",
  ...Object.entries(draft.models).map(([name, entry]) => `  ${name}: ${entry}`),
  ...draft.config,
  // The prober asks about 60 times a second, past the default 50: its own 429s would hide the latencies measured.
  "limits:",
  "  org_requests_per_s: 1000",
  "",
].join("\n");
// The bystander's agent (and any kind's) may use `bench`, the scripted model daemon-kit adds: it answers "done".
const d = await startDaemon({ ...draft.files, "config.yaml": config, "scripts/bench.yaml": 'steps:\n  - text: "done"\n' });

const admin = { authorization: `Bearer ${d.token}`, "content-type": "application/json" };
const made = (await (
  await fetch(`${d.url}/v1/tokens`, { method: "POST", headers: admin, body: JSON.stringify({ org: "bystander", name: "prober" }) })
).json()) as { token: string };
const created = await fetch(`${d.url}/v1/agents`, {
  method: "POST",
  headers: { ...admin, authorization: `Bearer ${made.token}` },
  body: JSON.stringify({ name: "pinger", description: "The other org's agent", model: "bench" }),
});
if (created.status !== 201) throw new Error(`the bystander's agent was not made: ${await created.text()}`);

const daemon: IsolationDaemon = {
  url: d.url,
  token: d.token,
  agentId: (name) => d.agentId(name),
  turnEnd: async (agentId, message) => {
    for (;;) {
      const res = await fetch(`${d.url}/v1/agents/${agentId}/events?type=turn.*&limit=1000`, { headers: admin });
      const { events } = (await res.json()) as { events: { type: string; run?: string; data: { messages?: string[] } }[] };
      const run = events.find((e) => e.type.endsWith(".turn.started") && e.data.messages?.includes(message))?.run;
      const end = run && events.find((e) => e.run === run && /\.turn\.(completed|failed|cancelled)$/.test(e.type));
      if (end) return end;
      await new Promise((r) => setTimeout(r, 100));
    }
  },
};

const round = (n: number) => Math.round(n * 10) / 10;
const results: Record<string, unknown> = {};
try {
  for (const k of kinds) {
    const prober = await startProber(d, made.token);
    const hostile: HostileTally = {};
    const cpu0 = d.cpuMs();
    const t0 = performance.now();
    let passes = 0;
    let alive = true;
    do {
      try {
        for (const [key, n] of Object.entries(await k.attack(daemon))) hostile[key] = (hostile[key] ?? 0) + n;
      } catch (err) {
        // A pass that failed (the daemon dropped it, or died) is counted; the figures say the rest.
        hostile.failed_passes = (hostile.failed_passes ?? 0) + 1;
        process.stderr.write(`${k.name}: a pass failed: ${String(err)}\n`);
      }
      passes++;
      alive = await fetch(`${d.url}/v1/health`).then(
        (r) => r.ok,
        () => false,
      );
    } while (alive && performance.now() - t0 < SECONDS * 1000);
    // The daemon's CPU time per pass: the work one input makes, which the load of a shared machine moves far less than latencies.
    const cpuPerPass = (d.cpuMs() - cpu0) / passes;
    const all = await prober.stop();
    const answered = all.filter((ms) => ms >= 0).sort((a, b) => a - b);
    results[k.name] = {
      hostile_input: k.hostile,
      p50_ms: round(percentile(answered, 50)),
      p99_ms: round(percentile(answered, 99)),
      max_ms: round(answered.at(-1) ?? 0),
      probes: answered.length,
      failed_probes: all.length - answered.length,
      passes,
      daemon_cpu_ms_per_pass: Math.round(cpuPerPass),
      hostile,
      daemon_alive: alive,
    };
    process.stderr.write(`${k.name}: ${JSON.stringify(results[k.name])}\n`);
    if (!alive) break;
  }
} finally {
  for (const k of kinds) await k.close?.();
  await d.close();
}
console.log(JSON.stringify({ bench: "isolation", seconds_per_kind: SECONDS, target: { max_ms: 1000, p99_ms: 250 }, kinds: results }));
