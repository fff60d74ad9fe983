/**
 * A cluster project without vitest, for benchmarks and harnesses that run
 * outside a test file: `wardrik init` in a folder of its own, the fault
 * agents (agents/NAME.md each, the probe, the fault policy and script),
 * config.yaml on a PostgreSQL database with a short lease, and the nodes
 * n1..nK made (not started). The test kit (cluster-kit.ts) builds on the
 * same pieces with vitest's clean-up.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { AGENT, agentMarkdown, POLICY, PROBE_AGENT, TOOLS } from "../faults/fault-agent.js";
import { agentIdOf, api, waitUntil } from "../faults/fault-api.js";
import { BIN } from "../faults/fault-paths.js";
import { waitForWorker, type FaultWorker } from "../faults/fault-worker-process.js";
import { clusterNode, type ClusterNode } from "./cluster-node.js";

export interface ClusterProject {
  /** The temp folder: the project is `dir`, workers' logs may go beside it. */
  root: string;
  dir: string;
  token: string;
  nodes: ClusterNode[];
}

/**
 * Makes the project on `database` (a postgres:// URL of an empty database)
 * with `agents` (fault agents, each running `script`) and `count` nodes.
 */
export function makeClusterProject(o: {
  database: string;
  agents: string[];
  script: string;
  count: number;
  leaseSeconds: number;
  /** config.yaml `worker_grace`, seconds; the daemon's default when absent. */
  workerGraceSeconds?: number;
  env?: Record<string, string>;
}): ClusterProject {
  const root = mkdtempSync(join(tmpdir(), "wardrik-cluster-"));
  const dir = join(root, "project");
  const init = spawnSync(process.execPath, [BIN, "init", dir], { encoding: "utf8" });
  if (init.status !== 0) throw new Error(`wardrik init failed: ${init.stderr}`);
  const write = (rel: string, text: string) => {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  };
  rmSync(join(dir, "agents", "helper.md"), { force: true });
  for (const name of o.agents) write(`agents/${name}.md`, agentMarkdown());
  write("agents/probe.md", PROBE_AGENT);
  write("policies/faults.yaml", POLICY);
  write(`scripts/${AGENT}.yaml`, o.script);
  let config = readFileSync(join(dir, "config.yaml"), "utf8");
  config = config.replace(/^models:[ \t]*\n/m, `models:\n  ${AGENT}: { provider: script, model: ${AGENT} }\n`);
  config = config.replace(/^database:.*$/m, `database: ${o.database}`);
  config += `cluster:\n  lease: ${o.leaseSeconds}\n`;
  if (o.workerGraceSeconds !== undefined) config += `worker_grace: ${o.workerGraceSeconds}\n`;
  write("config.yaml", config);
  const token = readFileSync(join(dir, ".wardrik", "admin-token"), "utf8").trim();
  const nodes = Array.from({ length: o.count }, (_, i) => clusterNode({ dir, token }, `n${i + 1}`, o.env ?? {}));
  return { root, dir, token, nodes };
}

/** The node that drives agent `agentId` now, as GET /v1/nodes reports it on `via`. */
export async function ownerOf(nodes: ClusterNode[], agentId: string, via?: ClusterNode): Promise<string | undefined> {
  const from = via ?? nodes.find((n) => n.alive)!;
  const name = (await api<{ agents: { id: string; name: string }[] }>(from, "GET", `/v1/agents`)).agents.find(
    (a) => a.id === agentId,
  )?.name;
  const r = await api<{ nodes: { name: string; alive: boolean; agents: string[] }[] }>(from, "GET", "/v1/nodes");
  return r.nodes.find((n) => name !== undefined && n.agents.includes(name))?.name;
}

/**
 * Waits until the worker is connected to `at` with its tools, and every other
 * live node of `nodes` lists them as served by `at`'s workers.
 */
export async function waitForClusterWorker(nodes: ClusterNode[], at: ClusterNode, w: FaultWorker, timeoutMs = 20_000): Promise<void> {
  await waitForWorker(at, w.child.pid!, timeoutMs);
  const probe = await agentIdOf(at, "probe");
  // The source's reason lists its tools by name.
  const tools = new RegExp([...TOOLS].sort().join(".*"));
  for (const n of nodes.filter((x) => x !== at && x.alive)) {
    await waitUntil(
      async () => {
        const r = await api<{ tool_sources: { name: string; reason?: string }[] }>(n, "GET", `/v1/agents/${probe}`);
        return r.tool_sources.some((s) => s.name === `workers on node ${at.name}` && tools.test(s.reason ?? ""));
      },
      `${n.name} to see the tools of ${at.name}'s workers`,
      timeoutMs,
    );
  }
}
