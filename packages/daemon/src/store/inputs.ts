import { childRunOf } from "../ids.js";
import type { Db, Row, SqlValue, Tx } from "./db.js";
import { queuedText, storedByReference, TEXT_PREFIX_CHARS, type TextEvent } from "./message-text.js";
import type { InputRow } from "./rows.js";

/** Messages queued for a conversation, claimed by the turn that takes them. */
export class InputsTable {
  constructor(private readonly db: Db) {}

  /**
   * Queues a message, or records it as already claimed by `run` (a turn started in the same commit).
   * `textIn`: its message.queued event, already flushed, which keeps a large text instead of this row (message-text.ts).
   */
  async insert(
    tx: Tx,
    input: { id: string; agentId: string; conversationId: string; text: string; run?: string; textIn?: TextEvent } & Pick<
      InputRow,
      "parentCall" | "callerTrace"
    >,
    now: string,
  ): Promise<void> {
    const byReference = storedByReference(input.text, input.textIn);
    await tx.run(
      "INSERT INTO inputs (id, agent_id, conversation_id, text, text_seq, status, run, parent_call, caller_trace, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      [
        input.id,
        input.agentId,
        input.conversationId,
        byReference ? textStart(input.text) : input.text,
        byReference ? input.textIn!.seq : null,
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
    const claimed = async (sql: string, params: SqlValue[]) =>
      inputRows(tx, await tx.all<ClaimedRow>(`${sql} RETURNING id, agent_id, text, text_seq, parent_call, caller_trace`, params));
    if (!firstChild) {
      const rows = await claimed("UPDATE inputs SET status = 'claimed', run = ? WHERE conversation_id = ? AND status = 'queued'", [
        run,
        conversationId,
      ]);
      return { run, inputs: rows, more: false };
    }
    const before = await claimed(
      "UPDATE inputs SET status = 'claimed', run = ? WHERE conversation_id = ? AND status = 'queued' AND id < ?",
      [run, conversationId, firstChild.id],
    );
    if (before.length > 0) return { run, inputs: before, more: true };
    const child = childRunOf(firstChild.parent_call);
    const rows = await claimed("UPDATE inputs SET status = 'claimed', run = ? WHERE id = ? AND status = 'queued'", [child, firstChild.id]);
    return { run: child, inputs: rows, more: true };
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

  /** The start (`chars` characters, at most TEXT_PREFIX_CHARS) of the first message each of a conversation's `runs` took, by run. */
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
    const rows = await this.db.all<StoredInput>("SELECT agent_id, text, text_seq FROM inputs WHERE run = ? ORDER BY id", [run]);
    const texts: string[] = [];
    for (const r of rows) texts.push(await wholeText(this.db, r));
    return texts;
  }
}

/** What an inputs row stores of its text: the text, or its start and the event holding it all. */
interface StoredInput extends Row {
  agent_id: string;
  text: string;
  text_seq: number | null;
}

interface ClaimedRow extends StoredInput {
  id: string;
  parent_call: string | null;
  caller_trace: string | null;
}

/** Claimed rows as the turn takes them, oldest first, a large text read back from its event. */
async function inputRows(tx: Pick<Tx, "get">, rows: ClaimedRow[]): Promise<InputRow[]> {
  rows.sort((a, b) => (a.id < b.id ? -1 : 1));
  const inputs: InputRow[] = [];
  for (const r of rows) {
    inputs.push({
      id: r.id,
      text: await wholeText(tx, r),
      ...(r.text_seq !== null ? { textIn: { seq: r.text_seq } } : {}),
      ...(r.parent_call ? { parentCall: r.parent_call } : {}),
      ...(r.caller_trace ? { callerTrace: r.caller_trace } : {}),
    });
  }
  return inputs;
}

async function wholeText(tx: Pick<Tx, "get">, row: StoredInput): Promise<string> {
  return row.text_seq === null ? row.text : queuedText(tx, row.agent_id, row.text_seq);
}

/** The first TEXT_PREFIX_CHARS of a text, not cutting a surrogate pair in two. */
function textStart(text: string): string {
  const end = TEXT_PREFIX_CHARS;
  const last = text.charCodeAt(end - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? end - 1 : end);
}
