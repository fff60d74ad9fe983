import type { Db, Row, Tx } from "./db.js";
import type { IdGenerator } from "../ids.js";
import type { HistoryEntry, StoredMessage } from "./message-format.js";
import type { ConversationRow } from "./rows.js";
import { StateError } from "./state-error.js";

export interface HistoryRow {
  seq: number;
  run: string | null;
  role: string;
  content: string;
  created_at: string;
}

/** Conversations of an agent and their message history. */
export class ConversationsTable {
  constructor(
    private readonly db: Db,
    private readonly ids: IdGenerator,
  ) {}

  /** The conversation `key` of an agent, created when it does not exist yet (`created_at` is then `now`). */
  async ensure(tx: Tx, agentId: string, key: string, now: string): Promise<ConversationRow & { created: boolean }> {
    const id = this.ids.next("conversation");
    const made = await tx.get<{ id: string }>(
      "INSERT INTO conversations (id, agent_id, key, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (agent_id, key) DO NOTHING RETURNING id",
      [id, agentId, key, now],
    );
    if (made) return { id, agent_id: agentId, key, summary: null, summary_upto: 0, created_at: now, created: true };
    const found = (await tx.get<ConversationRow & Row>("SELECT * FROM conversations WHERE agent_id = ? AND key = ?", [agentId, key]))!;
    return { ...found, created: false };
  }

  get(id: string): Promise<ConversationRow | undefined> {
    return this.db.get<ConversationRow & Row>("SELECT * FROM conversations WHERE id = ?", [id]);
  }

  find(agentId: string, key: string): Promise<ConversationRow | undefined> {
    return this.db.get<ConversationRow & Row>("SELECT * FROM conversations WHERE agent_id = ? AND key = ?", [agentId, key]);
  }

  list(agentId: string): Promise<ConversationRow[]> {
    return this.db.all<ConversationRow & Row>("SELECT * FROM conversations WHERE agent_id = ? ORDER BY created_at, key", [agentId]);
  }

  async setSummary(tx: Tx, id: string, summary: string, upto: number): Promise<void> {
    await tx.run("UPDATE conversations SET summary = ?, summary_upto = ? WHERE id = ?", [summary, upto, id]);
  }

  /** Empties a conversation's history (the event record keeps what happened). */
  async clear(tx: Tx, id: string): Promise<void> {
    await tx.run("DELETE FROM messages WHERE conversation_id = ?", [id]);
    await tx.run("UPDATE conversations SET summary = NULL, summary_upto = 0 WHERE id = ?", [id]);
  }

  /** The messages after `afterSeq`, parsed; a message that cannot be read is a StateError. */
  async history(conversationId: string, afterSeq = 0): Promise<HistoryEntry[]> {
    const rows = await this.db.all<{ seq: number; run: string | null; content: string }>(
      "SELECT seq, run, content FROM messages WHERE conversation_id = ? AND seq > ? ORDER BY seq",
      [conversationId, afterSeq],
    );
    return rows.map((r) => {
      let message: StoredMessage;
      try {
        message = JSON.parse(r.content) as StoredMessage;
      } catch (err) {
        throw new StateError(`The saved message ${r.seq} of conversation ${conversationId} cannot be read: ${(err as Error).message}`);
      }
      return { seq: r.seq, ...(r.run ? { run: r.run } : {}), message };
    });
  }

  /** One page of raw history rows for the API. */
  historyPage(conversationId: string, afterSeq: number, limit: number): Promise<HistoryRow[]> {
    return this.db.all<HistoryRow & Row>(
      "SELECT seq, run, role, content, created_at FROM messages WHERE conversation_id = ? AND seq > ? ORDER BY seq LIMIT ?",
      [conversationId, afterSeq, limit],
    );
  }
}
