/**
 * One run of the cluster kill harness (`npm run bench -- cluster-faults` and
 * its short pass in CI, kill-harness.test.ts): three built daemons on one
 * PostgreSQL database, two fault workers connected to different nodes (each
 * lists every node, so it moves when its node goes), three fault agents.
 * Messages flow to random agents through random live nodes while seeded
 * random faults hit: SIGKILL of the node that drives an agent (owner), of a
 * node that drives none (non-owner), of a worker process (started again
 * under its name, appending to the same log and answering from the same
 * finished-calls file), and SIGSTOP of an owner for
 * longer than its lease (then SIGCONT). Killed nodes start again. At the end
 * every agent is settled (the person approves each lost-answer call) and the
 * run is counted from ground truth (fault-ledger.ts). No vitest here.
 */
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { faultScript } from "../faults/fault-agent.js";
import { api, waitUntil, type FaultEvent } from "../faults/fault-api.js";
import { checkInvariants, scopeToMessages } from "../faults/fault-invariants.js";
import { settle } from "../faults/fault-settle.js";
import { startWorker, type FaultWorker, type LogEntry } from "../faults/fault-worker-process.js";
import { seededRandom } from "../faults/seeded-random.js";
import { sleep } from "../helpers/wait.js";
import { brokenCounts, countFaults, NO_COUNTS, readFinishedRecords, type FaultCounts } from "../faults/fault-ledger.js";
import type { ClusterNode } from "./cluster-node.js";
import { makeClusterProject, ownerOf, waitForClusterWorker } from "./cluster-project.js";

export const FAULT_KINDS = ["owner", "non_owner", "worker", "freeze"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface ClusterFaultOptions {
  /** An empty PostgreSQL database (postgres:// URL). */
  database: string;
  seed: number;
  /** Faults in this run. */
  kills: number;
  leaseSeconds?: number;
  /**
   * config.yaml `worker_grace`, seconds (the daemon's default, 30, when absent): how long a call whose worker was
   * killed under it waits for that worker's answer before the workers are asked and, if none knows it, a person.
   */
  workerGraceSeconds?: number;
  /**
   * A folder: a run with failures or a count that must be 0 and is not leaves there its nodes' logs, its workers'
   * logs and stderr and the agents' events, named by the seed.
   */
  keepLogsIn?: string | undefined;
  /** Told of each fault as it lands (a benchmark's progress on stderr). */
  onFault?: (kind: FaultKind, target: string) => void;
}

export interface ClusterFaultResult {
  seed: number;
  kills: number;
  by_kind: Record<FaultKind, number>;
  counts: FaultCounts;
  /** Broken promises of SPEC section 5 (checkInvariants), asks with another reason, or the error that ended the run. */
  failures: string[];
}

const AGENTS = ["r1", "r2", "r3"];
const WORKERS = 2;

export async function clusterFaultRun(o: ClusterFaultOptions): Promise<ClusterFaultResult> {
  const rnd = seededRandom(o.seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const lease = o.leaseSeconds ?? 2;
  const c = makeClusterProject({
    database: o.database,
    agents: AGENTS,
    script: faultScript({ toolMs: { lookup: 400, upsert: 400, charge: 400 }, model1Ms: 50, rerunMs: 50 }),
    count: 3,
    leaseSeconds: lease,
    ...(o.workerGraceSeconds !== undefined ? { workerGraceSeconds: o.workerGraceSeconds } : {}),
  });
  const byKind = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
  const accepted: Record<string, string[]> = Object.fromEntries(AGENTS.map((a) => [a, []]));
  const frozen = new Set<ClusterNode>();
  const workers: FaultWorker[] = [];
  // Worker i knows the nodes starting from a different one: w0 lands on n1, w1 on n3.
  const urlsOf = (i: number) => (i === 0 ? c.nodes : [...c.nodes].reverse()).map((n) => n.url).join(",");
  // Each worker keeps its finished calls in a file of its own (the SDK's FileFinishedCalls): started again after a
  // kill, it answers for what its predecessor finished, as issue 30 asks of a worker told to remember.
  const finishedFile = (i: number) => join(c.root, "workers", `w${i}.finished.jsonl`);
  const startW = (i: number) =>
    (workers[i] = startWorker({ url: urlsOf(i), token: c.token }, join(c.root, "workers"), `w${i}`, {
      finishedFile: finishedFile(i),
    }));
  const logs = (): LogEntry[] => workers.flatMap((w) => w.log());
  const live = () => c.nodes.filter((n) => n.alive && !frozen.has(n));
  let sent = 0;
  const failures: string[] = [];
  let kills = 0;
  const events: FaultEvent[] = [];
  let counts: FaultCounts | undefined;
  try {
    // Together, as a cluster's nodes may well start.
    await Promise.all(c.nodes.map((n) => n.start()));
    for (let i = 0; i < WORKERS; i++) startW(i);
    // A first start compiles the workers' TypeScript: slow on a busy machine.
    await waitForClusterWorker(c.nodes, c.nodes[0]!, workers[0]!, 60_000);
    await waitForClusterWorker(c.nodes, c.nodes[2]!, workers[1]!, 60_000);
    const ids: Record<string, string> = {};
    const listed = await api<{ agents: { id: string; name: string }[] }>(c.nodes[0]!, "GET", "/v1/agents");
    for (const a of listed.agents) ids[a.name] = a.id;

    const sendSome = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const agent = pick(AGENTS);
        const text = `${agent}.${++sent}`;
        try {
          const r = await api<{ message: string }>(pick(live()), "POST", `/v1/agents/${ids[agent]}/messages`, {
            text,
            conversation: "main",
          });
          accepted[agent]!.push(r.message);
        } catch {
          // The node died under the request: not accepted (if it was recorded, the counts still want one turn for it).
        }
      }
    };
    const ownerNode = async (): Promise<ClusterNode | undefined> => {
      const name = await ownerOf(c.nodes, ids[pick(AGENTS)]!, pick(live())).catch(() => undefined);
      return live().find((n) => n.name === name);
    };
    const owners = async (): Promise<Set<string>> => {
      const r = await api<{ nodes: { name: string; agents: string[] }[] }>(pick(live()), "GET", "/v1/nodes");
      return new Set(r.nodes.filter((n) => n.agents.some((a) => AGENTS.includes(a))).map((n) => n.name));
    };

    for (let k = 0; k < o.kills; k++) {
      await sendSome(int(1, 3));
      await sleep(int(0, 1200));
      const kind = pick(FAULT_KINDS);
      if (kind === "worker") {
        const i = int(0, WORKERS - 1);
        // The other worker, if it was killed last, is connected again first: two workers down at once for longer than
        // worker_grace (a restart takes that long on a busy machine) fail calls "No worker serves", rightly.
        await connectedSomewhere(live(), workers[1 - i]!, ids.probe!);
        o.onFault?.(kind, `w${i}`);
        await workers[i]!.stop();
        await sendSome(1);
        await sleep(int(0, 800));
        startW(i);
      } else {
        let target = kind === "non_owner" ? undefined : await ownerNode();
        if (!target) {
          const driving = await owners().catch(() => new Set<string>());
          const idle = live().filter((n) => !driving.has(n.name));
          target = kind === "non_owner" && idle.length > 0 ? pick(idle) : pick(live());
        }
        o.onFault?.(kind, target.name);
        if (kind === "freeze") {
          frozen.add(target);
          target.pause();
          // The thaw keeps its time whatever the send does: a node frozen inside a
          // transaction holds its row locks, so a live node's write may wait for it.
          const thawMs = lease * 1000 + int(500, 1500);
          const sending = sendSome(1);
          await sleep(thawMs);
          target.resume();
          frozen.delete(target);
          await sending;
        } else {
          await target.kill();
          await sendSome(1);
          await sleep(int(0, 800));
          await target.start();
        }
      }
      byKind[kind] += 1;
      kills += 1;
    }
    await sendSome(2);

    const via = c.nodes[0]!;
    for (const agent of AGENTS) {
      const r = await settle(via, ids[agent]!, accepted[agent]!, 120_000);
      events.push(...r.events);
      const mine = logs().filter((l) => l.tag.startsWith(`${agent}.`));
      const report = checkInvariants({ ...scopeToMessages(r.events, mine, accepted[agent]!), accepted: accepted[agent]! });
      failures.push(
        ...report.failures.map((f) => `${agent}: ${f}`),
        ...r.unexpectedApprovals.map((e) => `${agent}: asked ${String(e.data.reason)}`),
      );
    }
    counts = countFaults({
      events,
      logs: logs(),
      accepted: Object.values(accepted).flat(),
      // A worker killed between a call's effect and its record leaves nothing that knows: counted apart.
      recorded: readFinishedRecords(workers.map((_, i) => finishedFile(i))),
    });
    return { seed: o.seed, kills, by_kind: byKind, counts, failures };
  } catch (err) {
    const all = Object.values(accepted).flat().length;
    failures.push(`error: ${(err as Error).message.split("\n")[0]}`);
    // Unsettled: every accepted message counts as lost until shown otherwise.
    return { seed: o.seed, kills, by_kind: byKind, counts: { ...NO_COUNTS, accepted: all, lost: all }, failures };
  } finally {
    for (const n of c.nodes) n.resume();
    for (const w of workers) await w.stop();
    for (const n of c.nodes) await n.kill();
    if (o.keepLogsIn && (failures.length > 0 || (counts && brokenCounts(counts)))) keepLogs(o.keepLogsIn, o.seed, c.nodes, workers, events);
    rmSync(c.root, { recursive: true, force: true });
  }
}

/** What a failed run leaves to read: each node's log (stderr), each worker's execution log and stderr, the agents' events. */
function keepLogs(dir: string, seed: number, nodes: ClusterNode[], workers: FaultWorker[], events: FaultEvent[]): void {
  const into = join(dir, `seed-${seed}`);
  mkdirSync(into, { recursive: true });
  writeFileSync(join(into, "events.jsonl"), events.map((e) => JSON.stringify(e)).join("\n") + "\n");
  for (const n of nodes) writeFileSync(join(into, `${n.name}.log`), n.stderr());
  workers.forEach((w, i) => {
    writeFileSync(join(into, `w${i}.stderr`), w.stderr());
    if (existsSync(w.logFile)) copyFileSync(w.logFile, join(into, `w${i}.log.jsonl`));
  });
}

/** Waits until worker `w` is connected, with its tools, to one of `nodes` (seen through the probe agent). */
async function connectedSomewhere(nodes: ClusterNode[], w: FaultWorker, probe: string): Promise<void> {
  await waitUntil(
    async () => {
      for (const n of nodes) {
        const r = await api<{ tool_sources: { name: string; status: string }[] }>(n, "GET", `/v1/agents/${probe}`).catch(() => undefined);
        if (r?.tool_sources.some((src) => src.name.includes(`fault-worker-${w.child.pid}`) && src.status === "connected")) return true;
      }
      return false;
    },
    `worker ${w.child.pid} to connect to a node`,
    120_000,
    200,
  );
}
