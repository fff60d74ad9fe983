import { childRunOf } from "../ids.js";
import type { Db, SqlValue, Tx } from "./db.js";
import type { InputRow } from "./rows.js";

/** Messages queued for a conversation, claimed by the turn that takes them. */
export class InputsTable {
  constructor(private readonly db: Db) {}

  /** Queues a message, or records it as already claimed by `run` (a turn started in the same commit). */
  async insert(
    tx: Tx,
    input: { id: string; agentId: string; conversationId: string; text: string; run?: string } & Pick<
      InputRow,
      "parentCall" | "callerTrace"
    >,
    now: string,
  ): Promise<void> {
    await tx.run(
      "INSERT INTO inputs (id, agent_id, conversation_id, text, status, run, parent_call, caller_trace, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      [
        input.id,
        input.agentId,
        input.conversationId,
        input.text,
        input.run ? "claimed" : "queued",
        input.run ?? null,
        input.parentCall ?? null,
        input.callerTrace ?? null,
        now,
      ],
    );
  }

  /** The message an `agents/NAME` call sent its child, if it did: its status and the turn that took it. */
  async sentBy(parentCall: string): Promise<{ id: string; agent_id: string; status: string; run: string | null } | undefined> {
    return this.db.get("SELECT id, agent_id, status, run FROM inputs WHERE parent_call = ? ORDER BY id LIMIT 1", [parentCall]);
  }

  /** The `agents/NAME` call whose message a turn took, if one did (a child turn). */
  async parentCallOf(run: string): Promise<string | undefined> {
    const row = await this.db.get<{ parent_call: string }>(
      "SELECT parent_call FROM inputs WHERE run = ? AND parent_call IS NOT NULL ORDER BY id LIMIT 1",
      [run],
    );
    return row?.parent_call;
  }

  /**
   * Claims the queued messages of a conversation that the next turn takes, oldest first: every one up to the first
   * message an `agents/NAME` call sent (all of them when there is none), or else that message alone, for the turn
   * its call named (`childRunOf`). `run` is the turn that took them; `more`, whether some are still queued.
   */
  async claim(tx: Tx, conversationId: string, run: string): Promise<{ run: string; inputs: InputRow[]; more: boolean }> {
    const firstChild = await tx.get<{ id: string; parent_call: string }>(
      "SELECT id, parent_call FROM inputs WHERE conversation_id = ? AND status = 'queued' AND parent_call IS NOT NULL ORDER BY id LIMIT 1",
      [conversationId],
    );
    const claimed = (sql: string, params: SqlValue[]) => tx.all<ClaimedRow>(`${sql} RETURNING id, text, parent_call, caller_trace`, params);
    if (!firstChild) {
      const rows = await claimed("UPDATE inputs SET status = 'claimed', run = ? WHERE conversation_id = ? AND status = 'queued'", [
        run,
        conversationId,
      ]);
      return { run, inputs: inputRows(rows), more: false };
    }
    const before = await claimed(
      "UPDATE inputs SET status = 'claimed', run = ? WHERE conversation_id = ? AND status = 'queued' AND id < ?",
      [run, conversationId, firstChild.id],
    );
    if (before.length > 0) return { run, inputs: inputRows(before), more: true };
    const child = childRunOf(firstChild.parent_call);
    const rows = await claimed("UPDATE inputs SET status = 'claimed', run = ? WHERE id = ? AND status = 'queued'", [child, firstChild.id]);
    return { run: child, inputs: inputRows(rows), more: true };
  }

  /** Whether a conversation has queued messages. */
  async hasQueued(tx: Tx, conversationId: string): Promise<boolean> {
    return (
      (await tx.get("SELECT 1 AS one FROM inputs WHERE conversation_id = ? AND status = 'queued' LIMIT 1", [conversationId])) !== undefined
    );
  }

  /** Drops queued messages of an agent, or of one conversation; returns how many. */
  async drop(tx: Tx, agentId: string, conversationId?: string): Promise<number> {
    const res = conversationId
      ? await tx.run("UPDATE inputs SET status = 'dropped' WHERE conversation_id = ? AND status = 'queued'", [conversationId])
      : await tx.run("UPDATE inputs SET status = 'dropped' WHERE agent_id = ? AND status = 'queued'", [agentId]);
    return res.changes;
  }

  async conversationsWithQueued(agentId: string): Promise<string[]> {
    const rows = await this.db.all<{ conversation_id: string }>(
      "SELECT DISTINCT conversation_id FROM inputs WHERE agent_id = ? AND status = 'queued'",
      [agentId],
    );
    return rows.map((r) => r.conversation_id);
  }

  async ofTurn(run: string): Promise<string[]> {
    return (await this.db.all<{ id: string }>("SELECT id FROM inputs WHERE run = ? ORDER BY id", [run])).map((r) => r.id);
  }

  /** The start (`chars` characters) of the first message each of a conversation's `runs` took, by run. */
  async firstTexts(conversationId: string, runs: readonly string[], chars: number): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (runs.length === 0) return out;
    const rows = await this.db.all<{ run: string; text: string }>(
      `SELECT run, substr(text, 1, ?) AS text FROM inputs WHERE conversation_id = ? AND run IN (${runs.map(() => "?").join(", ")}) ORDER BY id`,
      [chars, conversationId, ...runs],
    );
    for (const r of rows) if (!out.has(r.run)) out.set(r.run, r.text);
    return out;
  }

  /** The texts of the messages a turn took, in the order they were queued. */
  async textsOf(run: string): Promise<string[]> {
    return (await this.db.all<{ text: string }>("SELECT text FROM inputs WHERE run = ? ORDER BY id", [run])).map((r) => r.text);
  }
}

type ClaimedRow = { id: string; text: string; parent_call: string | null; caller_trace: string | null };

function inputRows(rows: ClaimedRow[]): InputRow[] {
  return rows
    .map((r) => ({
      id: r.id,
      text: r.text,
      ...(r.parent_call ? { parentCall: r.parent_call } : {}),
      ...(r.caller_trace ? { callerTrace: r.caller_trace } : {}),
    }))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
}
