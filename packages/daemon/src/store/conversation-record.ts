import { EVENT_TYPE_PREFIX } from "@wardrik/protocol";
import type { Db, Row } from "./db.js";

/** A turn of a conversation as its events place it in the agent's log. */
export interface TurnMark {
  run: string;
  /** The seq of its turn.started event. */
  startedSeq: number;
  /** The seq of the event that ended it (turn.completed, turn.failed, turn.cancelled); null while it is open. */
  endedSeq: number | null;
}

/**
 * A change to a conversation's history that is not a turn: a clear, a
 * compaction with the summary it made, or the fork that made the
 * conversation with another's messages.
 */
export type HistoryMark =
  { kind: "cleared"; seq: number } | { kind: "compacted"; seq: number; summary: string; uptoSeq: number } | { kind: "forked"; seq: number };

const TURN_TYPES = ["turn.started", "turn.completed", "turn.failed", "turn.cancelled"].map((t) => EVENT_TYPE_PREFIX + t);
const CLEARED = EVENT_TYPE_PREFIX + "conversation.cleared";
const COMPACTED = EVENT_TYPE_PREFIX + "conversation.compacted";
const FORKED = EVENT_TYPE_PREFIX + "conversation.forked";

/**
 * Reads of the event log that place a conversation's history in time: which
 * turns had started and ended at a given event, and when it was cleared or
 * compacted. Fork and replay take a conversation "as it stood at event N"
 * from these. Committed events only.
 */
export class ConversationRecord {
  private readonly db: Db["committed"];

  constructor(db: Db) {
    this.db = db.committed;
  }

  /** The conversation's turns in the order they started. */
  async turns(agentId: string, conversationId: string): Promise<TurnMark[]> {
    const rows = await this.db.all<{ seq: number; type: string; run: string } & Row>(
      `SELECT e.seq, e.type, e.run FROM events e JOIN turns t ON t.id = e.run
       WHERE e.agent_id = ? AND t.conversation_id = ? AND e.type IN (?, ?, ?, ?) ORDER BY e.seq`,
      [agentId, conversationId, ...TURN_TYPES],
    );
    const byRun = new Map<string, TurnMark>();
    for (const r of rows) {
      if (r.type === TURN_TYPES[0]) byRun.set(r.run, { run: r.run, startedSeq: r.seq, endedSeq: null });
      else {
        const mark = byRun.get(r.run);
        if (mark && mark.endedSeq === null) mark.endedSeq = r.seq;
      }
    }
    return [...byRun.values()];
  }

  /** The conversation's clears, compactions and the fork that made it, in order. */
  async marks(agentId: string, conversationId: string): Promise<HistoryMark[]> {
    const rows = await this.db.all<{ seq: number; type: string; data: string } & Row>(
      "SELECT seq, type, data FROM events WHERE agent_id = ? AND type IN (?, ?, ?) ORDER BY seq",
      [agentId, CLEARED, COMPACTED, FORKED],
    );
    const marks: HistoryMark[] = [];
    for (const r of rows) {
      const data = JSON.parse(r.data) as { conversation_id?: string; summary?: string; upto_seq?: number };
      if (data.conversation_id !== conversationId) continue;
      if (r.type === CLEARED) marks.push({ kind: "cleared", seq: r.seq });
      else if (r.type === FORKED) marks.push({ kind: "forked", seq: r.seq });
      else if (typeof data.summary === "string" && typeof data.upto_seq === "number")
        marks.push({ kind: "compacted", seq: r.seq, summary: data.summary, uptoSeq: data.upto_seq });
    }
    return marks;
  }
}
