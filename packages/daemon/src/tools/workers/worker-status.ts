import type { WorkerConnection } from "./worker-connection.js";

export interface WorkerSourceStatus {
  name: string;
  status: string;
  reason?: string;
}

/**
 * How an agent's page lists the workers of its org: each connection here, by
 * name, with the tools it serves (and refused), then each other node whose
 * workers serve tools, as one source.
 */
export function workerSources(
  connections: Iterable<WorkerConnection>,
  org: string,
  otherNodes: readonly { node: string; tools: string[] }[],
): WorkerSourceStatus[] {
  const out: WorkerSourceStatus[] = [];
  for (const conn of connections) {
    if (conn.org !== org || !conn.greeted) continue;
    const n = conn.tools.size;
    const serves = n === 0 ? "serves no tools" : `serves ${n} tool${n === 1 ? "" : "s"}: ${[...conn.tools.keys()].join(", ")}`;
    const refused =
      conn.refused.size > 0 ? `; refused, as another worker serves them otherwise: ${[...conn.refused.keys()].join(", ")}` : "";
    out.push({ name: `worker ${conn.name} (${conn.id})`, status: conn.draining ? "draining" : "connected", reason: serves + refused });
  }
  for (const { node, tools } of otherNodes)
    out.push({
      name: `workers on node ${node}`,
      status: "connected",
      reason: `serve ${tools.length} tool${tools.length === 1 ? "" : "s"}: ${tools.join(", ")}`,
    });
  return out;
}
