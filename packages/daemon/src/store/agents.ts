import type { Db, Reads, Row, Tx } from "./db.js";
import type { AgentBaseStatus, AgentRow } from "./rows.js";
import type { Writer } from "./writer.js";

export interface NewAgent {
  id: string;
  org: string;
  name: string;
  source: "file" | "api";
  definition: string | null;
  file: string | null;
  status: AgentBaseStatus;
  reason: string | null;
}

/** The agents table: definitions, base status, and the counters every agent write updates. */
export class AgentsTable {
  constructor(private readonly db: Db) {}

  /** `from`: whose reads (Db.readsFor) when an org's work asks. */
  get(id: string, from: Reads = this.db): Promise<AgentRow | undefined> {
    return from.get<AgentRow & Row>("SELECT * FROM agents WHERE id = ?", [id]);
  }

  byName(org: string, name: string): Promise<AgentRow | undefined> {
    return this.db.get<AgentRow & Row>("SELECT * FROM agents WHERE org = ? AND name = ?", [org, name]);
  }

  /** Every agent, or one org's, by name; `after` and `limit` page through them. */
  list(org?: string, page: { after?: string; limit?: number } = {}): Promise<AgentRow[]> {
    const limit = page.limit ?? -1;
    if (org === undefined) return this.db.all<AgentRow & Row>("SELECT * FROM agents ORDER BY org, name");
    return this.db.all<AgentRow & Row>("SELECT * FROM agents WHERE org = ? AND name > ? ORDER BY name LIMIT ?", [
      org,
      page.after ?? "",
      limit < 0 ? 1_000_000_000 : limit,
    ]);
  }

  /** Agents with work to resume: a running turn or a queued message. */
  async withWork(): Promise<string[]> {
    const rows = await this.db.all<{ id: string }>(
      "SELECT id FROM agents WHERE running_turns > 0 UNION SELECT DISTINCT agent_id AS id FROM inputs WHERE status = 'queued'",
    );
    return rows.map((r) => r.id);
  }

  /** Whether the agent has a running turn or a queued message. */
  async hasWork(id: string): Promise<boolean> {
    const row = await this.db.get<{ n: number }>(
      "SELECT 1 AS n FROM agents WHERE id = ? AND running_turns > 0 UNION ALL SELECT 1 AS n FROM inputs WHERE agent_id = ? AND status = 'queued' LIMIT 1",
      [id, id],
    );
    return row !== undefined;
  }

  /** Adds the agent; false when the org already has an agent of that name (another node or request was first). */
  async insert(w: Writer, a: NewAgent): Promise<boolean> {
    const r = await w.run(
      "INSERT INTO agents (id, org, name, source, definition, file, status, reason, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (org, name) DO NOTHING",
      [a.id, a.org, a.name, a.source, a.definition, a.file, a.status, a.reason, w.now, w.now],
    );
    return r.changes > 0;
  }

  /**
   * Runs `fn` as the only one, among every node of the database, that
   * changes `org`'s agents from agents/ (a start, a reload): nodes starting
   * together register each agent once.
   */
  syncing<T>(org: string, fn: () => Promise<T>): Promise<T> {
    return this.db.exclusive(`agents-sync:${org}`, fn);
  }

  async redefine(
    w: Writer,
    id: string,
    change: { definition: string | null; file: string | null; status: AgentBaseStatus; reason: string | null },
  ): Promise<void> {
    await w.run("UPDATE agents SET definition = ?, file = ?, status = ?, reason = ?, updated_at = ? WHERE id = ?", [
      change.definition,
      change.file,
      change.status,
      change.reason,
      w.now,
      id,
    ]);
  }

  async markUnreadable(w: Writer, id: string, reason: string): Promise<void> {
    await w.run("UPDATE agents SET status = 'unreadable', reason = ? WHERE id = ?", [reason, id]);
  }

  /** Idle -> asleep; false when the agent was not idle (it keeps its status, e.g. unreadable). */
  async markAsleep(w: Writer, id: string): Promise<boolean> {
    return (await w.run("UPDATE agents SET status = 'asleep' WHERE id = ? AND status = 'idle'", [id])).changes > 0;
  }

  /** Asleep -> idle; false when it was not asleep. */
  async markAwake(w: Writer, id: string): Promise<boolean> {
    return (await w.run("UPDATE agents SET status = 'idle' WHERE id = ? AND status = 'asleep'", [id])).changes > 0;
  }

  /** Removes an agent's live data; its events stay in the record. */
  async deleteWithData(tx: Tx, id: string): Promise<void> {
    await tx.run("UPDATE inputs SET status = 'dropped' WHERE agent_id = ? AND status = 'queued'", [id]);
    await tx.run("DELETE FROM files WHERE agent_id = ?", [id]);
    await tx.run("DELETE FROM spend WHERE agent_id = ?", [id]);
    await tx.run("DELETE FROM messages WHERE conversation_id IN (SELECT id FROM conversations WHERE agent_id = ?)", [id]);
    await tx.run("DELETE FROM conversations WHERE agent_id = ?", [id]);
    await tx.run("DELETE FROM agents WHERE id = ?", [id]);
  }

  /** Recomputes every agent's open-turn counters from the turns table (a check at start). */
  async recount(tx: Tx): Promise<number> {
    const res = await tx.run(
      "UPDATE agents SET running_turns = (SELECT COUNT(*) FROM turns t WHERE t.agent_id = agents.id AND t.status = 'running'), parked_turns = (SELECT COUNT(*) FROM turns t WHERE t.agent_id = agents.id AND t.status = 'parked') WHERE running_turns != (SELECT COUNT(*) FROM turns t WHERE t.agent_id = agents.id AND t.status = 'running') OR parked_turns != (SELECT COUNT(*) FROM turns t WHERE t.agent_id = agents.id AND t.status = 'parked')",
    );
    return res.changes;
  }
}
