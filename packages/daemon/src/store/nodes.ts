import type { Db, Row } from "./db.js";
import { nowMsSql } from "./leases.js";

export interface NodeRow {
  name: string;
  url: string;
  pid: number;
  host: string;
  started_at: string;
  heartbeat_at: number;
}

/** The daemons of a cluster and the worker tools each one serves. (How nodes prove themselves: cluster/node-key.ts, never the database.) */
export class NodesTable {
  private readonly now: string;

  constructor(private readonly db: Db) {
    this.now = nowMsSql(db);
  }

  /** Says this node lives (and where it answers). */
  async heartbeat(node: { name: string; url: string; pid: number; host: string; startedAt: string }): Promise<void> {
    await this.db.transaction((tx) =>
      tx.run(
        `INSERT INTO nodes (name, url, pid, host, started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?, ${this.now}) ON CONFLICT (name) DO UPDATE SET url = excluded.url, pid = excluded.pid, host = excluded.host, started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at`,
        [node.name, node.url, node.pid, node.host, node.startedAt],
      ),
    );
  }

  /** Every node, with how long ago (ms, by the database's clock) it last said it lives. */
  list(): Promise<(NodeRow & { silent_ms: number })[]> {
    return this.db.all<NodeRow & { silent_ms: number } & Row>(`SELECT *, ${this.now} - heartbeat_at AS silent_ms FROM nodes ORDER BY name`);
  }

  async remove(name: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.run("DELETE FROM worker_tools WHERE node = ?", [name]);
      await tx.run("DELETE FROM nodes WHERE name = ?", [name]);
    });
  }

  /**
   * Forgets what the workers of `node` served: a node that starts again under
   * the same name (after a kill -9, which left its rows) serves no worker yet.
   */
  async forgetWorkerTools(node: string): Promise<void> {
    await this.db.run("DELETE FROM worker_tools WHERE node = ?", [node]);
  }

  /** Replaces what the workers connected to `node` serve for `org`. */
  async setWorkerTools(node: string, org: string, tools: { name: string; descriptor: string }[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.run("DELETE FROM worker_tools WHERE node = ? AND org = ?", [node, org]);
      for (const t of tools) {
        await tx.run("INSERT INTO worker_tools (node, org, tool, descriptor) VALUES (?, ?, ?, ?)", [node, org, t.name, t.descriptor]);
      }
    });
  }

  /** Tools served by workers of live nodes other than `self` (a heartbeat within `aliveMs`). */
  remoteWorkerTools(
    self: string,
    aliveMs: number,
  ): Promise<{ node: string; url: string; org: string; tool: string; descriptor: string }[]> {
    return this.db.all<{ node: string; url: string; org: string; tool: string; descriptor: string }>(
      `SELECT w.node, n.url, w.org, w.tool, w.descriptor FROM worker_tools w JOIN nodes n ON n.name = w.node WHERE w.node != ? AND n.heartbeat_at >= ${this.now} - ? ORDER BY w.node`,
      [self, aliveMs],
    );
  }
}
