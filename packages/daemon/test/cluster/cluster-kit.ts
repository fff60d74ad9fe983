/**
 * A cluster for the tests: one project (made by the real `wardrik init`), one
 * PostgreSQL database, and several real daemons started from that project
 * folder with `wardrik daemon --port P --node nK`. Each node can be killed
 * (SIGKILL), paused (SIGSTOP) and resumed (SIGCONT), and started again. The
 * fault agent and the fault worker of test/faults serve as the workload, so
 * the same invariants check what every node recorded against what the
 * worker ran. PostgreSQL runs only (the vitest `postgres` project).
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll } from "vitest";
import { NodesTable } from "../../src/store/nodes.js";
import { openDb, type OpenedDb } from "../../src/store/open-db.js";
import { createProject, type TestProject } from "../helpers/spawn-daemon.js";
import { clusterNode, type ClusterNode } from "./cluster-node.js";
import { ownerOf, waitForClusterWorker as waitForNodesToSeeWorker } from "./cluster-project.js";
import { AGENT, agentMarkdown, faultFiles, faultScript, type TurnShape } from "../faults/fault-agent.js";
import { agentIdOf } from "../faults/fault-api.js";
import { startWorker, type FaultWorker } from "../faults/fault-worker-process.js";

export type { ClusterNode };

export interface Cluster {
  p: TestProject;
  nodes: ClusterNode[];
  leaseSeconds: number;
  /** The ID of the fault agent. */
  agentId: string;
  /** The ID of an agent by name. */
  idOf(name: string): Promise<string>;
  /** Starts a fault worker connected to `urls` (a comma-separated list of node addresses). */
  worker(urls: string, name?: string, opts?: { connectLater?: boolean }): FaultWorker;
  /** The node that drives `agentId` now, as GET /v1/nodes reports it on `via`. */
  ownerOf(agentId: string, via?: ClusterNode): Promise<string | undefined>;
  node(name: string): ClusterNode;
}

/**
 * Config for a cluster with a short lease, so failover tests take seconds, and
 * a worker grace of 5 s: a call whose answer died with a node goes to a person
 * once the workers that are left have said they do not know it and 5 s passed.
 */
function withLease(seconds: number): (init: string) => string {
  return (text) => `${text.replace(/\n?$/, "\n")}cluster:\n  lease: ${seconds}\nworker_grace: 5\n`;
}

/**
 * Starts `count` nodes n1..nK one after the other on one database, with the
 * fault agent (turn shapes by message prefix, as faultScript takes them).
 * Everything is stopped after the file.
 */
export async function startCluster(opts: {
  count: number;
  leaseSeconds?: number;
  byPrefix?: Record<string, TurnShape>;
  fallback?: TurnShape;
  env?: Record<string, string>;
  /** More agents like the fault agent (same model, tools and policy), for tests that need one nobody owns yet. */
  agents?: string[];
  /** More files of the project (an agent with another policy, say). */
  files?: Record<string, string>;
  /** Runs once the project (and its database) exists, before any node starts: to give the nodes an older database, say. */
  beforeNodes?: (p: TestProject) => Promise<void>;
}): Promise<Cluster> {
  const leaseSeconds = opts.leaseSeconds ?? 2;
  const p = await createProject({
    start: false,
    config: withLease(leaseSeconds),
    scripts: { [AGENT]: faultScript(opts.fallback ?? {}, opts.byPrefix ?? {}) },
    files: {
      ...faultFiles(),
      ...Object.fromEntries((opts.agents ?? []).map((name) => [`agents/${name}.md`, agentMarkdown()])),
      ...opts.files,
    },
    remove: ["agents/helper.md"],
  });
  await opts.beforeNodes?.(p);
  const nodes: ClusterNode[] = [];
  for (let i = 1; i <= opts.count; i++) {
    const n = clusterNode({ dir: p.dir, token: p.token }, `n${i}`, opts.env ?? {});
    afterAll(() => n.kill().catch(() => undefined));
    await n.start();
    nodes.push(n);
  }
  const workers: FaultWorker[] = [];
  afterAll(async () => {
    for (const w of workers) await w.stop();
  });
  const agentId = await agentIdOf(nodes[0]!);
  const cluster: Cluster = {
    p,
    nodes,
    leaseSeconds,
    agentId,
    idOf: (name) => agentIdOf(nodes[0]!, name),
    worker(urls, name = `worker-${workers.length + 1}`, opts = {}) {
      const w = startWorker({ url: urls, token: p.token }, join(dirname(p.dir), "workers"), name, opts);
      workers.push(w);
      return w;
    },
    ownerOf: (id, via) => ownerOf(nodes, id, via),
    node(name) {
      const n = nodes.find((x) => x.name === name);
      if (!n) throw new Error(`no node ${name}`);
      return n;
    },
  };
  return cluster;
}

/**
 * Waits until the worker is connected to `at` with its tools, and every other
 * live node lists them as served by `at`'s workers.
 */
export function waitForClusterWorker(c: Cluster, at: ClusterNode, w: FaultWorker, timeoutMs = 20_000): Promise<void> {
  return waitForNodesToSeeWorker(c.nodes, at, w, timeoutMs);
}

/** The cluster's database, opened by the test (application name `cluster-kit`); the caller closes it. */
export function openClusterDb(c: Cluster): Promise<OpenedDb> {
  const url = /^database:[ \t]*(\S+)/m.exec(readFileSync(join(c.p.dir, "config.yaml"), "utf8"))![1]!;
  return openDb(url, { applicationName: "cluster-kit", log: () => undefined });
}

/** The worker tools of live nodes, as the database tells every node (what another node would forward calls for). */
export async function workerToolsOf(c: Cluster): Promise<{ node: string; tool: string }[]> {
  const db = await openClusterDb(c);
  try {
    const rows = await new NodesTable(db).remoteWorkerTools("", c.leaseSeconds * 1000);
    return rows.map((r) => ({ node: r.node, tool: r.tool }));
  } finally {
    await db.close();
  }
}
