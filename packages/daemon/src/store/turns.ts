import type { Db, Reads, Row, SqlValue, Tx } from "./db.js";
import type { TurnRow, TurnStatusValue } from "./rows.js";
import { STATE_FORMAT } from "./state-error.js";

/**
 * Turns. Every change names the status it expects, so a write for a turn
 * that someone else has ended (a cancel, a takeover) changes nothing and the
 * caller sees it (`false`).
 */
export class TurnsTable {
  /** `redact`: the org's known secret values out of the reply and the reason a turn ends with (they are shown, like events). */
  constructor(
    private readonly db: Db,
    private readonly redact: (data: unknown, org: string) => unknown = (d) => d,
  ) {}

  get(id: string): Promise<TurnRow | undefined> {
    return this.db.get<TurnRow & Row>("SELECT * FROM turns WHERE id = ?", [id]);
  }

  open(agentId: string, tx: Reads = this.db): Promise<TurnRow[]> {
    return tx.all<TurnRow & Row>("SELECT * FROM turns WHERE agent_id = ? AND status IN ('running', 'parked') ORDER BY id", [agentId]);
  }

  openOf(tx: Reads, conversationId: string): Promise<TurnRow | undefined> {
    return tx.get<TurnRow & Row>("SELECT * FROM turns WHERE conversation_id = ? AND status IN ('running', 'parked') ORDER BY id LIMIT 1", [
      conversationId,
    ]);
  }

  /**
   * A turn's status, with its row locked until the transaction ends on
   * PostgreSQL (SQLite runs one writer at a time). Commands that park a turn
   * and those that decide its calls take this lock first, so neither can act
   * on what the other is about to change.
   */
  async lock(tx: Tx, id: string): Promise<TurnStatusValue | undefined> {
    const sql = `SELECT status FROM turns WHERE id = ?${this.db.dialect.forUpdate}`;
    return (await tx.get<{ status: TurnStatusValue }>(sql, [id]))?.status;
  }

  /** Like `lock`, with how many rounds' results are in the history. */
  async lockProgress(tx: Tx, id: string): Promise<Pick<TurnRow, "status" | "rounds_done" | "conversation_id"> | undefined> {
    const sql = `SELECT status, rounds_done, conversation_id FROM turns WHERE id = ?${this.db.dialect.forUpdate}`;
    return tx.get<Pick<TurnRow, "status" | "rounds_done" | "conversation_id"> & Row>(sql, [id]);
  }

  /** A conversation's turns, newest first; `before` (a turn ID) pages back to older ones. */
  list(conversationId: string, opts: { before?: string | undefined; limit: number }): Promise<TurnRow[]> {
    return opts.before === undefined
      ? this.db.all<TurnRow & Row>("SELECT * FROM turns WHERE conversation_id = ? ORDER BY id DESC LIMIT ?", [conversationId, opts.limit])
      : this.db.all<TurnRow & Row>("SELECT * FROM turns WHERE conversation_id = ? AND id < ? ORDER BY id DESC LIMIT ?", [
          conversationId,
          opts.before,
          opts.limit,
        ]);
  }

  /** `traceContext`: the W3C traceparent of the turn's trace, when traces are exported (turn-traces.ts). */
  async insert(
    tx: Tx,
    t: { id: string; agentId: string; conversationId: string; traceContext?: string | undefined },
    now: string,
  ): Promise<TurnRow> {
    await tx.run(
      "INSERT INTO turns (id, agent_id, conversation_id, status, format, started_at, trace_context) VALUES (?, ?, ?, 'running', ?, ?, ?)",
      [t.id, t.agentId, t.conversationId, STATE_FORMAT, now, t.traceContext ?? null],
    );
    return {
      id: t.id,
      agent_id: t.agentId,
      conversation_id: t.conversationId,
      status: "running",
      reason: null,
      reason_code: null,
      reply: null,
      iterations: 0,
      rounds: 0,
      rounds_done: 0,
      spend_micros: 0,
      tool_micros: 0,
      settled_micros: 0,
      format: STATE_FORMAT,
      started_at: now,
      ended_at: null,
      parked_ms: 0,
      parked_since_ms: null,
      output: null,
      repairs: 0,
    };
  }

  /** A model reply of a running turn: its iteration count, saved rounds and cost. */
  async recordReply(tx: Tx, run: string, r: { iterations: number; rounds: number; costMicros: number }): Promise<boolean> {
    const res = await tx.run(
      "UPDATE turns SET iterations = ?, rounds = ?, spend_micros = spend_micros + ? WHERE id = ? AND status = 'running'",
      [r.iterations, r.rounds, r.costMicros, run],
    );
    return res.changes > 0;
  }

  /**
   * A final reply that did not fit the agent's `output` schema, sent back for
   * repair: its iteration and cost like any reply, and one more repair used.
   */
  async recordRepair(tx: Tx, run: string, r: { iterations: number; costMicros: number }): Promise<boolean> {
    const res = await tx.run(
      "UPDATE turns SET iterations = ?, repairs = repairs + 1, spend_micros = spend_micros + ? WHERE id = ? AND status = 'running'",
      [r.iterations, r.costMicros, run],
    );
    return res.changes > 0;
  }

  /** A round's results joined the history. */
  async roundDone(tx: Tx, run: string, round: number): Promise<boolean> {
    const res = await tx.run("UPDATE turns SET rounds_done = ? WHERE id = ? AND status = 'running' AND rounds_done < ?", [
      round,
      run,
      round,
    ]);
    return res.changes > 0;
  }

  /** Adds a cost to a turn: model spend (compaction), or tool spend reported by a call. */
  async addSpend(tx: Tx, run: string, micros: number, from: "model" | "tool"): Promise<void> {
    if (micros === 0) return;
    if (from === "tool")
      await tx.run("UPDATE turns SET spend_micros = spend_micros + ?, tool_micros = tool_micros + ? WHERE id = ?", [micros, micros, run]);
    else await tx.run("UPDATE turns SET spend_micros = spend_micros + ? WHERE id = ?", [micros, run]);
  }

  /**
   * Moves a turn between open states (running <-> parked) at `nowMs`: parking
   * notes the time, resuming adds the wait to `parked_ms` (the timeout counts
   * only the time a turn runs).
   */
  async move(tx: Tx, run: string, from: TurnStatusValue, to: TurnStatusValue, nowMs: number): Promise<boolean> {
    const sql =
      to === "parked"
        ? "UPDATE turns SET status = ?, parked_since_ms = ? WHERE id = ? AND status = ?"
        : "UPDATE turns SET status = ?, parked_ms = parked_ms + COALESCE(? - parked_since_ms, 0), parked_since_ms = NULL WHERE id = ? AND status = ?";
    return (await tx.run(sql, [to, nowMs, run, from])).changes > 0;
  }

  /**
   * Ends an open turn (and records its last model reply, when it ends with
   * one); returns its final figures, or undefined when it was not `from`.
   * The caller settles `spend_micros - settled_micros` into the daily spend.
   */
  async end(
    tx: Tx,
    run: string,
    from: TurnStatusValue,
    end: {
      /** The turn's agent's org, whose secrets are blanked from the reason and reply. */
      org: string;
      status: TurnStatusValue;
      reason: string | null;
      code: string | null;
      reply: string | null;
      output?: string | undefined;
      iterations?: number;
      costMicros?: number;
    },
    now: string,
  ): Promise<EndedTurn | undefined> {
    return tx.get<EndedTurn & Row>(
      "UPDATE turns SET status = ?, reason = ?, reason_code = ?, reply = ?, output = ?, ended_at = ?, iterations = COALESCE(?, iterations), spend_micros = spend_micros + ? WHERE id = ? AND status = ? RETURNING iterations, spend_micros, tool_micros, settled_micros",
      [
        end.status,
        this.redact(end.reason, end.org),
        end.code,
        this.redact(end.reply, end.org),
        end.output === undefined ? null : this.redact(end.output, end.org),
        now,
        end.iterations ?? null,
        end.costMicros ?? 0,
        run,
        from,
      ] as SqlValue[],
    );
  }
}

/** A turn's figures as it ended; `spend_micros - settled_micros` is not in the daily spend yet. */
export interface EndedTurn {
  iterations: number;
  spend_micros: number;
  tool_micros: number;
  settled_micros: number;
}
