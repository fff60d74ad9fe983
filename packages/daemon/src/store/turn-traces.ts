import type { Db } from "./db.js";

/** What tracing needs of a turn it did not start here (resumed, recovered, ended elsewhere). */
export interface TurnTraceRow {
  trace_context: string | null;
  agent_id: string;
  conversation_id: string;
  started_at: string;
  /** A child turn's: the trace context of the agents/NAME call it runs for (its root span's parent). */
  caller_trace: string | null;
}

/**
 * The trace context of turns (`turns.trace_context`, migration 005): written
 * by the turn's INSERT (TurnsTable.insert), read when a later stretch of the turn continues its
 * trace. Only the tracing layer uses it, and only when traces are exported.
 */
export class TurnTraces {
  constructor(private readonly db: Db) {}

  /** Records a trace context for a turn that has none yet (it started with tracing off); returns the one that holds. */
  async adopt(run: string, traceparent: string): Promise<string> {
    return this.db.transaction(async (tx) => {
      await tx.run("UPDATE turns SET trace_context = ? WHERE id = ? AND trace_context IS NULL", [traceparent, run]);
      const row = await tx.get<{ trace_context: string | null }>("SELECT trace_context FROM turns WHERE id = ?", [run]);
      return row?.trace_context ?? traceparent;
    });
  }

  get(run: string): Promise<TurnTraceRow | undefined> {
    return this.db.get<TurnTraceRow & Record<string, string | null>>(
      "SELECT trace_context, agent_id, conversation_id, started_at, " +
        "(SELECT caller_trace FROM inputs WHERE inputs.run = turns.id AND parent_call IS NOT NULL ORDER BY id LIMIT 1) AS caller_trace " +
        "FROM turns WHERE id = ?",
      [run],
    );
  }
}
