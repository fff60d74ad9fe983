import type { Db, Tx } from "./db.js";

/** The database's clock in epoch milliseconds: every node compares leases against one clock. */
export function nowMsSql(db: Db): string {
  return db.dialect.nowMs;
}

export interface Lease {
  agentId: string;
  token: number;
  /** Extended by this renewal (a lease skipped as locked is still held, until its end as before). */
  renewed: boolean;
}

/**
 * Agent ownership: a node owns an awake agent through a lease (its name,
 * when the lease ends, and a fencing token that grows with every new owner).
 * A node may take an agent nobody owns, one whose lease ran out, or one it
 * owned already (the same node, restarted).
 */
export class LeasesTable {
  private readonly now: string;

  constructor(private readonly db: Db) {
    this.now = nowMsSql(db);
  }

  /**
   * Takes the agent for `node` for `leaseMs`: its new fencing token, or
   * undefined when another node holds it. `force` takes it whoever holds it
   * (one daemon owns a SQLite database, whatever its node's name was before).
   */
  async claim(agentId: string, node: string, leaseMs: number, force = false): Promise<number | undefined> {
    const held = force ? "" : ` AND (owner_node IS NULL OR owner_node = ? OR lease_expires < ${this.now})`;
    const row = await this.db.transaction((tx) =>
      tx.get<{ lease_token: number }>(
        `UPDATE agents SET owner_node = ?, lease_token = lease_token + 1, lease_expires = ${this.now} + ? WHERE id = ?${held} RETURNING lease_token`,
        force ? [node, leaseMs, agentId] : [node, leaseMs, agentId, node],
      ),
    );
    return row?.lease_token;
  }

  /**
   * Extends the leases `node` holds; the agents it still owns, with their
   * tokens. On PostgreSQL a row locked by an open transaction (the owner's
   * own turn writing, a message queued through another node) is skipped, not
   * waited for: a renewal that waited would hold every row it had renewed
   * until the slowest writer committed, and each of those agents' turns would
   * queue behind it (measured: 25 ms renewals and turns stalled on three
   * nodes). A skipped lease is renewed at a later round; one that would run
   * out within `mustRenewWithinMs` is renewed waiting, by itself.
   */
  async renew(node: string, leaseMs: number, mustRenewWithinMs = 0): Promise<Lease[]> {
    if (!this.db.dialect.concurrentWriters) {
      const rows = await this.db.transaction((tx) =>
        tx.all<{ id: string; lease_token: number }>(
          `UPDATE agents SET lease_expires = ${this.now} + ? WHERE owner_node = ? RETURNING id, lease_token`,
          [leaseMs, node],
        ),
      );
      return rows.map((r) => ({ agentId: r.id, token: r.lease_token, renewed: true }));
    }
    // The outer SELECT reads the rows as committed before this statement: the owner and token of each.
    const rows = await this.db.all<{ id: string; lease_token: number; renewed: number; left_ms: number }>(
      `WITH free AS (SELECT id FROM agents WHERE owner_node = ? FOR UPDATE SKIP LOCKED),
renewed AS (UPDATE agents SET lease_expires = ${this.now} + ? WHERE id IN (SELECT id FROM free) RETURNING id)
SELECT id, lease_token, CASE WHEN id IN (SELECT id FROM renewed) THEN 1 ELSE 0 END AS renewed, (lease_expires - ${this.now})::float8 AS left_ms FROM agents WHERE owner_node = ?`,
      [node, leaseMs, node],
    );
    const urgent = rows.filter((r) => r.renewed === 0 && r.left_ms < mustRenewWithinMs).map((r) => r.id);
    if (urgent.length > 0)
      await this.db.run(
        `UPDATE agents SET lease_expires = ${this.now} + ? WHERE owner_node = ? AND id IN (${urgent.map(() => "?").join(", ")})`,
        [leaseMs, node, ...urgent],
      );
    return rows.map((r) => ({ agentId: r.id, token: Number(r.lease_token), renewed: Number(r.renewed) === 1 || urgent.includes(r.id) }));
  }

  /**
   * Extends one lease, if `node` still holds it with `token` (run out or not,
   * as long as no other node has taken it): whether it does.
   */
  async extend(agentId: string, node: string, token: number, leaseMs: number): Promise<boolean> {
    const res = await this.db.transaction((tx) =>
      tx.run(`UPDATE agents SET lease_expires = ${this.now} + ? WHERE id = ? AND owner_node = ? AND lease_token = ?`, [
        leaseMs,
        agentId,
        node,
        token,
      ]),
    );
    return res.changes > 0;
  }

  /** Gives an agent up (it fell asleep, or the node stops), if `node` still holds it with `token`. */
  async release(tx: Tx, agentId: string, node: string, token: number): Promise<boolean> {
    const res = await tx.run("UPDATE agents SET owner_node = NULL, lease_expires = 0 WHERE id = ? AND owner_node = ? AND lease_token = ?", [
      agentId,
      node,
      token,
    ]);
    return res.changes > 0;
  }

  /** Gives up every agent `node` holds (it stops): the other nodes take them at once instead of after the lease. */
  async releaseNode(node: string): Promise<number> {
    return (
      await this.db.transaction((tx) => tx.run("UPDATE agents SET owner_node = NULL, lease_expires = 0 WHERE owner_node = ?", [node]))
    ).changes;
  }

  /**
   * Agents with work and no live owner (nobody, or a lease that ran out): a
   * running turn or a queued message. On PostgreSQL, rows another node is
   * claiming right now are skipped rather than waited for.
   */
  async orphansWithWork(limit: number): Promise<string[]> {
    const lock = this.db.dialect.skipLocked;
    return this.db.transaction(async (tx) => {
      const rows = await tx.all<{ id: string }>(
        `SELECT id FROM agents WHERE (owner_node IS NULL OR lease_expires < ${this.now}) AND status != 'unreadable' AND (running_turns > 0 OR id IN (SELECT agent_id FROM inputs WHERE status = 'queued')) ORDER BY id LIMIT ?${lock}`,
        [limit],
      );
      return rows.map((r) => r.id);
    });
  }

  /** Who owns an agent now, if anyone (with a lease that has not run out). */
  async owner(agentId: string): Promise<string | undefined> {
    const row = await this.db.get<{ owner_node: string | null }>(
      `SELECT owner_node FROM agents WHERE id = ? AND lease_expires >= ${this.now}`,
      [agentId],
    );
    return row?.owner_node ?? undefined;
  }

  /** The agents of `org` each node owns now, by name. */
  owned(org: string): Promise<{ node: string; name: string }[]> {
    return this.db.all<{ node: string; name: string }>(
      `SELECT owner_node AS node, name FROM agents WHERE owner_node IS NOT NULL AND lease_expires >= ${this.now} AND org = ? ORDER BY owner_node, name`,
      [org],
    );
  }
}
