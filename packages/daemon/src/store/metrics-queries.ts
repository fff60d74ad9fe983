import type { Db } from "./db.js";
import { agentStatus, type AgentBaseStatus } from "./rows.js";

/** Per agent: what the gauges of GET /metrics read from the database at scrape time. */
export interface AgentGaugeRow {
  id: string;
  org: string;
  name: string;
  status: ReturnType<typeof agentStatus>;
  approvals_waiting: number;
  queued: number;
}

/**
 * The read queries behind the Prometheus gauges that describe stored state
 * (agents by status, calls waiting for a person, queued messages). Run at
 * scrape time: the numbers come from the database, so every node of a
 * cluster reports the same, and nothing is kept in step on the hot path.
 */
export class MetricsQueries {
  constructor(private readonly db: Db) {}

  async agents(): Promise<AgentGaugeRow[]> {
    const [agents, waiting, queued] = await Promise.all([
      this.db.all<{ id: string; org: string; name: string; status: AgentBaseStatus; running_turns: number; parked_turns: number }>(
        "SELECT id, org, name, status, running_turns, parked_turns FROM agents",
      ),
      this.db.all<{ agent_id: string; n: number }>("SELECT agent_id, COUNT(*) AS n FROM calls WHERE status = 'waiting' GROUP BY agent_id"),
      this.db.all<{ agent_id: string; n: number }>("SELECT agent_id, COUNT(*) AS n FROM inputs WHERE status = 'queued' GROUP BY agent_id"),
    ]);
    const waitingBy = new Map(waiting.map((r) => [r.agent_id, Number(r.n)]));
    const queuedBy = new Map(queued.map((r) => [r.agent_id, Number(r.n)]));
    return agents.map((a) => ({
      id: a.id,
      org: a.org,
      name: a.name,
      status: agentStatus(a),
      approvals_waiting: waitingBy.get(a.id) ?? 0,
      queued: queuedBy.get(a.id) ?? 0,
    }));
  }

  /** When a turn started (for the duration of a turn that started before this process, or on another node). */
  async turnStartedAt(run: string): Promise<string | undefined> {
    return (await this.db.get<{ started_at: string }>("SELECT started_at FROM turns WHERE id = ?", [run]))?.started_at;
  }
}
