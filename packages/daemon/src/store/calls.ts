import type { Db, Reads, Row, SqlValue, Tx } from "./db.js";
import type { CallRow, CallStatus } from "./rows.js";
import { placeholders } from "./writer.js";
import { valueJson } from "./json-once.js";

/** A call of a round being saved, with its decision already made. */
export interface NewCall {
  id: string;
  modelCallId: string;
  tool: string;
  args: unknown;
  readOnly: boolean;
  idempotent: boolean;
  retrySafe: boolean;
  status: "waiting" | "running" | "failed" | "denied";
  decision: string | null;
  reason: string | null;
  rule: string | null;
  /** The result the model gets for a call that ends at once (denied, invalid). */
  result?: unknown;
  errorCode?: string | null;
}

const OPEN = "('planned', 'waiting', 'approved', 'running')";
/** A waiting call that is a question to a person (person/ask), not an approval. */
const NOT_QUESTION = "(error_code IS NULL OR error_code <> 'question')";

/** The row `insertRound` writes for a call, without reading it back. */
export function savedCallRow(run: string, agentId: string, round: number, position: number, c: NewCall, now: string): CallRow {
  const running = c.status === "running";
  const final = c.status === "failed" || c.status === "denied";
  return {
    id: c.id,
    run,
    round,
    position,
    agent_id: agentId,
    model_call_id: c.modelCallId,
    tool: c.tool,
    args: JSON.stringify(c.args ?? {}),
    original_args: null,
    status: c.status,
    read_only: c.readOnly ? 1 : 0,
    idempotent: c.idempotent ? 1 : 0,
    retry_safe: c.retrySafe ? 1 : 0,
    idempotency_key: c.id,
    decision: c.decision,
    reason: c.reason,
    rule: c.rule,
    result: c.result === undefined ? null : JSON.stringify(c.result),
    error_code: c.errorCode ?? null,
    cost_micros: 0,
    attempts: running ? 1 : 0,
    started_at: running ? now : null,
    ended_at: final ? now : null,
    worker: null,
  };
}

/**
 * Tool calls. Each state change is one named UPDATE that names the states it
 * may leave, so a change that lost a race changes nothing (`false`).
 */
export class CallsTable {
  constructor(private readonly db: Db) {}

  get(id: string): Promise<CallRow | undefined> {
    return this.db.get<CallRow & Row>("SELECT * FROM calls WHERE id = ?", [id]);
  }

  ofRound(tx: Tx, run: string, round: number): Promise<CallRow[]> {
    return tx.all<CallRow & Row>("SELECT * FROM calls WHERE run = ? AND round = ? ORDER BY position", [run, round]);
  }

  ofTurn(run: string, from: Reads = this.db): Promise<CallRow[]> {
    return from.all<CallRow & Row>("SELECT * FROM calls WHERE run = ? ORDER BY round, position", [run]);
  }

  /** Of the calls `ids`, those whose arguments a person edited at approval: what they ran with (`args`) and what the model asked for. */
  async edited(ids: readonly string[]): Promise<Pick<CallRow, "id" | "args" | "original_args">[]> {
    const out: Pick<CallRow, "id" | "args" | "original_args">[] = [];
    // In slices: a statement takes a bounded number of parameters.
    for (let i = 0; i < ids.length; i += 500) {
      const slice = ids.slice(i, i + 500);
      out.push(
        ...(await this.db.all<Pick<CallRow, "id" | "args" | "original_args"> & Row>(
          `SELECT id, args, original_args FROM calls WHERE id IN (${slice.map(() => "?").join(", ")}) AND original_args IS NOT NULL`,
          slice,
        )),
      );
    }
    return out;
  }

  /** The agent's latest calls a person approved with edited arguments, the latest first. */
  latestEdited(agentId: string, limit: number): Promise<CallRow[]> {
    return this.db.all<CallRow & Row>("SELECT * FROM calls WHERE agent_id = ? AND original_args IS NOT NULL ORDER BY id DESC LIMIT ?", [
      agentId,
      limit,
    ]);
  }

  waiting(agentId: string): Promise<CallRow[]> {
    return this.db.all<CallRow & Row>("SELECT * FROM calls WHERE agent_id = ? AND status = 'waiting' ORDER BY id", [agentId]);
  }

  /** Saves a whole round in one statement: every call with its decision, allowed ones already running. */
  async insertRound(tx: Tx, run: string, agentId: string, round: number, calls: NewCall[], now: string): Promise<void> {
    if (calls.length === 0) return;
    const params: SqlValue[] = [];
    calls.forEach((c, position) => {
      const r = savedCallRow(run, agentId, round, position, c, now);
      params.push(
        r.id,
        r.run,
        r.round,
        r.position,
        r.agent_id,
        r.model_call_id,
        r.tool,
        r.args,
        r.status,
        r.read_only,
        r.idempotent,
        r.retry_safe,
        r.idempotency_key,
        r.decision,
        r.reason,
        r.rule,
        r.result,
        r.error_code,
        r.attempts,
        r.started_at,
        r.ended_at,
      );
    });
    await tx.run(
      `INSERT INTO calls (id, run, round, position, agent_id, model_call_id, tool, args, status, read_only, idempotent, retry_safe, idempotency_key, decision, reason, rule, result, error_code, attempts, started_at, ended_at) VALUES ${placeholders(calls.length, 21)}`,
      params,
    );
  }

  /** A decision for a call saved undecided (rounds saved by state format 1). */
  async decide(
    tx: Tx,
    id: string,
    d: Pick<NewCall, "status" | "decision" | "reason" | "rule" | "result" | "errorCode">,
    now: string,
  ): Promise<boolean> {
    const final = d.status === "failed" || d.status === "denied";
    const res = await tx.run(
      "UPDATE calls SET status = ?, decision = ?, reason = ?, rule = ?, result = ?, error_code = ?, ended_at = ? WHERE id = ? AND status = 'planned'",
      [
        d.status === "running" ? "approved" : d.status,
        d.decision,
        d.reason,
        d.rule,
        d.result === undefined ? null : JSON.stringify(d.result),
        d.errorCode ?? null,
        final ? now : null,
        id,
      ],
    );
    return res.changes > 0;
  }

  /** A new attempt starts. */
  async start(tx: Tx, id: string, from: CallStatus, attempt: number, now: string): Promise<boolean> {
    const res = await tx.run(
      "UPDATE calls SET status = 'running', decision = COALESCE(decision, 'allow'), attempts = ?, started_at = ? WHERE id = ? AND status = ?",
      [attempt, now, id, from],
    );
    return res.changes > 0;
  }

  /** Ends an open call with its result (or error) for the model. */
  async finish(
    tx: Tx,
    id: string,
    end: { status: "completed" | "failed" | "denied" | "killed" | "timed_out"; result: unknown; code: string | null; costMicros: number },
    now: string,
    answerOf?: number,
  ): Promise<boolean> {
    const params = [end.status, valueJson(end.result), end.code, end.costMicros, now, id];
    // An answer of an earlier attempt does not end a call that was started again since (that attempt's answer will).
    const attemptRule = answerOf === undefined ? "" : " AND attempts <= ?";
    if (answerOf !== undefined) params.push(answerOf);
    const res = await tx.run(
      `UPDATE calls SET status = ?, result = ?, error_code = ?, cost_micros = cost_micros + ?, ended_at = ? WHERE id = ? AND status IN ${OPEN}${attemptRule}`,
      params,
    );
    return res.changes > 0;
  }

  /**
   * waiting -> approved: a person let it run, with the arguments as they are or
   * with `args` edited by them (the model's own stay in original_args).
   */
  async approve(tx: Tx, id: string, args?: unknown): Promise<boolean> {
    if (args === undefined)
      return (
        (await tx.run(`UPDATE calls SET status = 'approved' WHERE id = ? AND status = 'waiting' AND ${NOT_QUESTION}`, [id])).changes > 0
      );
    const res = await tx.run(
      `UPDATE calls SET status = 'approved', original_args = COALESCE(original_args, args), args = ? WHERE id = ? AND status = 'waiting' AND ${NOT_QUESTION}`,
      [JSON.stringify(args), id],
    );
    return res.changes > 0;
  }

  /** running -> waiting: it may have run, but its answer was lost; a person decides. */
  async awaitPerson(tx: Tx, id: string, reason: string): Promise<boolean> {
    const res = await tx.run(
      "UPDATE calls SET status = 'waiting', decision = 'ask', reason = ?, error_code = 'lost' WHERE id = ? AND status = 'running'",
      [reason, id],
    );
    return res.changes > 0;
  }

  /** running or approved -> waiting: a person/ask call waits for a person's answer (error_code `question` marks it). */
  async askPerson(tx: Tx, id: string, from: "running" | "approved"): Promise<boolean> {
    const res = await tx.run("UPDATE calls SET status = 'waiting', error_code = 'question' WHERE id = ? AND status = ?", [id, from]);
    return res.changes > 0;
  }

  /** waiting (a question) -> completed: the person's answer is the call's result. */
  async answer(tx: Tx, id: string, output: unknown, now: string): Promise<boolean> {
    const res = await tx.run(
      "UPDATE calls SET status = 'completed', result = ?, error_code = NULL, ended_at = ? WHERE id = ? AND status = 'waiting' AND error_code = 'question'",
      [JSON.stringify(output), now, id],
    );
    return res.changes > 0;
  }

  /** The questions waiting for an answer among `agentIds`' calls, oldest first. */
  waitingQuestions(agentIds: readonly string[]): Promise<({ agent_id: string; id: string; args: string } & Row)[]> {
    if (agentIds.length === 0) return Promise.resolve([]);
    return this.db.all(
      `SELECT agent_id, id, args FROM calls WHERE status = 'waiting' AND error_code = 'question' AND agent_id IN ${placeholders(1, agentIds.length)} ORDER BY id`,
      [...agentIds],
    );
  }

  /** The oldest question waiting for an answer in one conversation of an agent (its key, such as slack:C1:170.1). */
  questionIn(agentId: string, conversationKey: string): Promise<CallRow | undefined> {
    return this.db.get<CallRow & Row>(
      `SELECT c.* FROM calls c JOIN turns t ON t.id = c.run JOIN conversations cv ON cv.id = t.conversation_id
        WHERE c.agent_id = ? AND c.status = 'waiting' AND c.error_code = 'question' AND cv.key = ? ORDER BY c.id LIMIT 1`,
      [agentId, conversationKey],
    );
  }

  /** Closes every open call of a turn that ended; returns them. */
  closeOpen(tx: Tx, run: string, result: string, code: string, now: string): Promise<{ id: string; tool: string }[]> {
    return tx.all<{ id: string; tool: string }>(
      `UPDATE calls SET status = 'killed', result = ?, error_code = ?, ended_at = ? WHERE run = ? AND status IN ${OPEN} RETURNING id, tool`,
      [JSON.stringify(result), code, now, run],
    );
  }

  /**
   * failed -> completed, for a call that failed because no worker served it
   * (code no_worker) when a worker's answer of an attempt it was sent says it ran.
   */
  async completeLate(tx: Tx, id: string, output: unknown, attempt: number): Promise<boolean> {
    const res = await tx.run(
      "UPDATE calls SET status = 'completed', result = ?, error_code = NULL WHERE id = ? AND status = 'failed' AND error_code = 'no_worker' AND attempts >= ?",
      [JSON.stringify(output ?? null), id, attempt],
    );
    return res.changes > 0;
  }

  /**
   * Notes which worker process each running call was sent to, in one
   * transaction. Not a state change and not fenced: any node that hands a
   * call to one of its workers writes it.
   */
  async sentTo(notes: { id: string; worker: string }[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      for (const n of notes) await tx.run("UPDATE calls SET worker = ? WHERE id = ? AND status = 'running'", [n.worker, n.id]);
    });
  }

  async addCost(tx: Tx, id: string, micros: number): Promise<void> {
    if (micros !== 0) await tx.run("UPDATE calls SET cost_micros = cost_micros + ? WHERE id = ?", [micros, id]);
  }
}
