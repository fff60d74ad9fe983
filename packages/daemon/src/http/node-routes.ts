import { NodeList } from "@wardrik/protocol";
import type { RouteTable } from "./route-table.js";
import type { ApiServices } from "./services.js";

/** The daemons of the cluster (one on SQLite), and which of the org's agents each drives. */
export function registerNodeRoutes(routes: RouteTable, svc: ApiServices): void {
  routes.add({
    method: "get",
    path: "/v1/nodes",
    operationId: "listNodes",
    tags: ["cluster"],
    summary: "The daemons sharing this database: address, start, last heartbeat, and the org's agents each drives",
    response: NodeList,
    handler: async (c) => {
      const owned = await svc.store.leases.owned(c.get("org"));
      const nodes = await svc.store.nodes.list();
      const now = Date.now();
      return c.json({
        nodes: nodes.map((n) => ({
          name: n.name,
          url: n.url,
          pid: n.pid,
          host: n.host,
          started_at: n.started_at,
          last_heartbeat: new Date(now - n.silent_ms).toISOString(),
          alive: n.silent_ms <= svc.leaseMs,
          agents: owned.filter((o) => o.node === n.name).map((o) => o.name),
        })),
      });
    },
  });
}
