import type { Db, Row, SqlValue, Tx } from "./db.js";

export type DeliveryStatusValue = "pending" | "delivered" | "failed";

/** One (event, subscriber) pair to send, as the outbox hook writes it. */
export interface NewDelivery {
  id: string;
  org: string;
  agentId: string;
  eventSeq: number;
  eventId: string;
  eventType: string;
  subscriber: string;
}

export interface DeliveryRow {
  id: string;
  org: string;
  agent_id: string;
  event_seq: number;
  event_id: string;
  event_type: string;
  subscriber: string;
  status: DeliveryStatusValue;
  attempts: number;
  next_at: number;
  window_from: number;
  claimed_until: number;
  claim: string | null;
  /** 1 for the lowest pending delivery of its (agent, subscriber) queue: the one a sender may claim. */
  head: number;
  /** On a claimed head: the last event_seq of its sender's run (see 015_outbound_intents.sql). */
  run_end: number | null;
  /** Sends after a take-over from a sender that died: the subscriber may have it twice. */
  possible_repeats: number;
  created_at: string;
  ended_at: string | null;
  last_error: string | null;
}

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  started_at: string;
  duration_ms: number;
  http_status: number | null;
  error: string | null;
}

export const MAX_ROWS_PER_INSERT = 400;
const STATUS_CONDITION: Record<DeliveryStatusValue, string> = {
  pending: " AND status = 'pending'",
  delivered: " AND status = 'delivered'",
  failed: " AND status = 'failed'",
};
const ROW_VALUES = Array.from({ length: 12 }, () => "?").join(", ");
/** 1 when the queue (agent, subscriber) has nothing pending yet. */
const HEAD_IF_EMPTY =
  "(SELECT CASE WHEN EXISTS (SELECT 1 FROM deliveries q WHERE q.agent_id = ? AND q.subscriber = ? AND q.status = 'pending') THEN 0 ELSE 1 END)";

/**
 * The webhook outbox (008_webhooks_triggers.sql, 010_deliveries_write_less.sql).
 * Rows are written with their events (`insert`, inside the writing
 * transaction); senders claim them with a lease, so among several daemons on
 * one PostgreSQL database each delivery is sent by one node at a time, and a
 * delivery waits while an earlier one of the same agent and subscriber is
 * pending (its queue's order). Delivered rows are deleted after a while
 * (`prune`); dead letters stay until they are sent again.
 */
export class DeliveriesTable {
  constructor(private readonly db: Db) {}

  /**
   * One multi-row INSERT (per 400 rows) inside the transaction that wrote the
   * events. The first row of each queue becomes its head when nothing of that
   * queue is pending; that transaction holds the agent's row (its sequence
   * numbers), which `finish` also takes, so the two never both miss a head.
   * Returns how many new heads there are: only they need a sender to look.
   */
  async insert(tx: Tx, rows: readonly NewDelivery[], nowIso: string, nowMs: number): Promise<number> {
    let heads = 0;
    for (let i = 0; i < rows.length; i += MAX_ROWS_PER_INSERT) {
      const chunk = rows.slice(i, i + MAX_ROWS_PER_INSERT);
      const params: SqlValue[] = [];
      const values: string[] = [];
      const first = new Set<string>();
      for (const d of chunk) {
        params.push(d.id, d.org, d.agentId, d.eventSeq, d.eventId, d.eventType, d.subscriber, "pending", nowMs, nowMs, 0, nowIso);
        const queue = `${d.agentId}\u0000${d.subscriber}`;
        // Later rows of a queue in this statement are never its head: its first row is before them.
        if (first.has(queue)) values.push(`(${ROW_VALUES}, 0)`);
        else {
          first.add(queue);
          values.push(`(${ROW_VALUES}, ${HEAD_IF_EMPTY})`);
          params.push(d.agentId, d.subscriber);
        }
      }
      const made = await tx.all<{ head: number }>(
        `INSERT INTO deliveries (id, org, agent_id, event_seq, event_id, event_type, subscriber, status, next_at, window_from, claimed_until, created_at, head) VALUES ${values.join(", ")} RETURNING head`,
        params,
      );
      heads += made.filter((r) => Number(r.head) === 1).length;
    }
    return heads;
  }

  /** `FOR UPDATE SKIP LOCKED` where transactions run at once (PostgreSQL); SQLite runs one writer at a time. */
  private get skipLocked(): string {
    return this.db.dialect.skipLocked;
  }

  /**
   * At the start of the only daemon of a SQLite file, every claim is a dead
   * process's: each lapses now. The claim itself stays, so the sender that
   * takes the head over knows its run may have been sent.
   */
  async releaseAll(): Promise<number> {
    return (await this.db.run("UPDATE deliveries SET claimed_until = 0 WHERE status = 'pending' AND claimed_until > 0")).changes;
  }

  /**
   * Deletes up to `limit` delivered deliveries (with their attempts) queued
   * before the ID `idBefore` (IDs sort by time) and delivered before
   * `beforeIso`: the outbox keeps what was sent for a while, then lets it go.
   * Pending and dead-lettered ones are never deleted here. Returns how many went.
   */
  prune(idBefore: string, beforeIso: string, limit: number): Promise<number> {
    return this.db.transaction(async (tx) => {
      // The ID bound keeps the walk along the key to rows old enough, however many newer ones there are.
      const gone = await tx.all<{ id: string }>(
        `DELETE FROM deliveries WHERE id IN (
           SELECT id FROM deliveries WHERE id < ? AND status = 'delivered' AND ended_at < ? ORDER BY id LIMIT ?${this.skipLocked}
         ) RETURNING id`,
        [idBefore, beforeIso, limit],
      );
      if (gone.length > 0)
        await tx.run(
          `DELETE FROM delivery_attempts WHERE delivery_id IN (${gone.map(() => "?").join(", ")})`,
          gone.map((g) => g.id),
        );
      return gone.length;
    });
  }

  /** When the next queue head nobody holds is due (epoch ms), if any. */
  async nextDue(nowMs: number): Promise<number | undefined> {
    const r = await this.db.get<{ at: number | null }>(
      "SELECT MIN(next_at) AS at FROM deliveries WHERE status = 'pending' AND head = 1 AND claimed_until <= ?",
      [nowMs],
    );
    return r?.at === null || r?.at === undefined ? undefined : Number(r.at);
  }

  get(org: string, id: string): Promise<DeliveryRow | undefined> {
    return this.db.get<DeliveryRow & Row>("SELECT * FROM deliveries WHERE org = ? AND id = ?", [org, id]);
  }

  /** One org's deliveries, newest first; `before` is the last ID of the previous page. */
  list(
    org: string,
    page: { status?: DeliveryStatusValue | undefined; before?: string | undefined; limit: number },
  ): Promise<DeliveryRow[]> {
    // The status is written into the query, not bound: only then can the databases use the dead letters' own index.
    const status = page.status ? STATUS_CONDITION[page.status] : "";
    return this.db.all<DeliveryRow & Row>(`SELECT * FROM deliveries WHERE org = ? AND id < ?${status} ORDER BY id DESC LIMIT ?`, [
      org,
      page.before ?? "\u{10FFFF}",
      page.limit,
    ]);
  }

  async attemptsOf(ids: readonly string[]): Promise<Map<string, AttemptRow[]>> {
    const out = new Map<string, AttemptRow[]>();
    if (ids.length === 0) return out;
    const rows = await this.db.all<AttemptRow & Row>(
      `SELECT * FROM delivery_attempts WHERE delivery_id IN (${ids.map(() => "?").join(", ")}) ORDER BY delivery_id, attempt`,
      ids,
    );
    for (const r of rows) {
      let list = out.get(r.delivery_id);
      if (!list) out.set(r.delivery_id, (list = []));
      list.push(r);
    }
    return out;
  }

  /**
   * Sends a delivery again, whatever its state: pending now, with a fresh
   * retry window, as a head of its own (an old event sent again on request
   * does not hold up the newer ones of its queue).
   */
  async retry(org: string, id: string, nowMs: number): Promise<boolean> {
    const r = await this.db.run(
      "UPDATE deliveries SET status = 'pending', head = 1, next_at = ?, window_from = ?, ended_at = NULL, claim = NULL, claimed_until = 0 WHERE org = ? AND id = ?",
      [nowMs, nowMs, org, id],
    );
    return r.changes > 0;
  }
}
