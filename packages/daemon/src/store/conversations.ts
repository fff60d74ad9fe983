import type { Db, Reads, Row, Tx } from "./db.js";
import type { IdGenerator } from "../ids.js";
import type { HistoryEntry, StoredMessage, StoredToolResultRef, ToolResultPart } from "./message-format.js";
import { queuedText } from "./message-text.js";
import type { ConversationRow } from "./rows.js";
import { parseStored, StateError } from "./state-error.js";

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

  get(id: string, from: Reads = this.db): Promise<ConversationRow | undefined> {
    return from.get<ConversationRow & Row>("SELECT * FROM conversations WHERE id = ?", [id]);
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
  async history(conversationId: string, afterSeq = 0, from: Reads = this.db): Promise<HistoryEntry[]> {
    const rows = await from.all<{ seq: number; run: string | null; content: string }>(
      "SELECT seq, run, content FROM messages WHERE conversation_id = ? AND seq > ? ORDER BY seq",
      [conversationId, afterSeq],
    );
    const texts = new NamedParts(from, conversationId);
    const entries: HistoryEntry[] = [];
    for (const r of rows) {
      let message: StoredMessage;
      try {
        message = JSON.parse(r.content) as StoredMessage;
      } catch (err) {
        throw new StateError(`The saved message ${r.seq} of conversation ${conversationId} cannot be read: ${(err as Error).message}`);
      }
      message = await texts.whole(message);
      entries.push({ seq: r.seq, ...(r.run ? { run: r.run } : {}), message });
    }
    return entries;
  }

  /** One page of raw history rows for the API (a large user text, kept in its event, put back in its row's content). */
  async historyPage(conversationId: string, afterSeq: number, limit: number): Promise<HistoryRow[]> {
    const rows = await this.db.all<HistoryRow & Row>(
      "SELECT seq, run, role, content, created_at FROM messages WHERE conversation_id = ? AND seq > ? ORDER BY seq LIMIT ?",
      [conversationId, afterSeq, limit],
    );
    const texts = new NamedParts(this.db, conversationId);
    for (const r of rows) {
      // Only rows that may name another row are parsed here.
      if (
        !(r.role === "user" && r.content.length <= 512 && r.content.includes('"textSeq"')) &&
        !(r.role === "tool" && r.content.includes('"outputInCall"'))
      )
        continue;
      const message = parseStored(r.content, `message ${r.seq} of conversation ${conversationId}`) as StoredMessage;
      const whole = await texts.whole(message);
      if (whole !== message) r.content = JSON.stringify(whole);
    }
    return rows;
  }
}

/**
 * What a conversation's stored messages name instead of holding (message-text.ts):
 * large user texts in their message.queued events, large tool outputs in their calls.
 */
class NamedParts {
  private agentId: string | undefined;

  constructor(
    private readonly db: Reads,
    private readonly conversationId: string,
  ) {}

  /** The message with what its row names put back; the message itself when it names nothing. */
  async whole(message: StoredMessage): Promise<StoredMessage> {
    if (message.role === "user")
      return message.textSeq === undefined ? message : { role: "user", text: await this.at(message.textSeq), input: message.input };
    if (message.role !== "tool" || !message.results.some(isOutputRef)) return message;
    const results: ToolResultPart[] = [];
    for (const r of message.results) {
      if (!isOutputRef(r)) {
        results.push(r);
        continue;
      }
      const row = await this.db.get<{ result: string | null }>("SELECT result FROM calls WHERE id = ?", [r.callId]);
      if (row?.result == null)
        throw new StateError(`Call ${r.callId}, which holds a result of conversation ${this.conversationId}, is missing.`);
      const output = parseStored(row.result, `call ${r.callId} result`);
      results.push({ modelCallId: r.modelCallId, callId: r.callId, tool: r.tool, isError: false, output });
    }
    return { role: "tool", results };
  }

  private async at(seq: number): Promise<string> {
    if (this.agentId === undefined) {
      const row = await this.db.get<{ agent_id: string }>("SELECT agent_id FROM conversations WHERE id = ?", [this.conversationId]);
      if (!row) throw new StateError(`Conversation ${this.conversationId} no longer exists.`);
      this.agentId = row.agent_id;
    }
    return queuedText(this.db, this.agentId, seq);
  }
}

function isOutputRef(part: ToolResultPart | StoredToolResultRef): part is StoredToolResultRef {
  return (part as Partial<StoredToolResultRef>).outputInCall === true;
}
