import type { Db, Tx } from "./db.js";

export interface SpendToday {
  model_micros: number;
  tools_micros: number;
}

/** What each agent spent per day, in micro-dollars (model tokens and tool costs). */
export class SpendTable {
  constructor(private readonly db: Db) {}

  async add(tx: Tx, agentId: string, day: string, modelMicros: number, toolsMicros: number): Promise<void> {
    if (modelMicros === 0 && toolsMicros === 0) return;
    await tx.run(
      "INSERT INTO spend (agent_id, day, model_micros, tools_micros) VALUES (?, ?, ?, ?) ON CONFLICT (agent_id, day) DO UPDATE SET model_micros = spend.model_micros + excluded.model_micros, tools_micros = spend.tools_micros + excluded.tools_micros",
      [agentId, day, modelMicros, toolsMicros],
    );
  }

  /**
   * What an agent spent on `day`: what finished turns settled, plus what its
   * open turns have spent so far (settled when they end).
   */
  async on(agentId: string, day: string): Promise<SpendToday> {
    const settled = await this.db.get<{ model_micros: number; tools_micros: number }>(
      "SELECT model_micros, tools_micros FROM spend WHERE agent_id = ? AND day = ?",
      [agentId, day],
    );
    const open = await this.db.get<{ total: number | null; tools: number | null }>(
      "SELECT SUM(spend_micros - settled_micros) AS total, SUM(tool_micros) AS tools FROM turns WHERE agent_id = ? AND status IN ('running', 'parked')",
      [agentId],
    );
    const openTotal = open?.total ?? 0;
    const openTools = Math.min(open?.tools ?? 0, openTotal);
    return {
      model_micros: (settled?.model_micros ?? 0) + openTotal - openTools,
      tools_micros: (settled?.tools_micros ?? 0) + openTools,
    };
  }
}

/** The UTC day a spend counts toward. */
export function dayOf(d: Date): string {
  return d.toISOString().slice(0, 10);
}
