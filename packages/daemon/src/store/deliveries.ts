import type { Db, Row, SqlValue, Tx } from "./db.js";
import { toEvent, type EventRow } from "./events.js";
import type { StoredEvent } from "../events/event-bus.js";

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

/** A delivery this node holds a claim on, with the event it carries. */
export interface ClaimedDelivery {
  row: DeliveryRow;
  event: StoredEvent;
}

/** What one attempt came to; `next` decides whether the delivery is retried, dead-lettered or done. */
export interface AttemptOutcome {
  startedAt: string;
  durationMs: number;
  httpStatus: number | null;
  error: string | null;
  next: { status: "delivered" } | { status: "failed"; endedAt: string } | { status: "pending"; nextAt: number };
}

const MAX_ROWS_PER_INSERT = 400;
const ROW_VALUES = Array.from({ length: 12 }, () => "?").join(", ");
/** 1 when the queue (agent, subscriber) has nothing pending yet. */
const HEAD_IF_EMPTY =
  "(SELECT CASE WHEN EXISTS (SELECT 1 FROM deliveries q WHERE q.agent_id = ? AND q.subscriber = ? AND q.status = 'pending') THEN 0 ELSE 1 END)";

/**
 * The webhook outbox (008_webhooks_triggers.sql). Rows are written with their
 * events (`insert`, inside the writing transaction); senders claim them with
 * a lease, so among several daemons on one PostgreSQL database each delivery
 * is sent by one node at a time, and a delivery waits while an earlier one of
 * the same agent and subscriber is pending (its queue's order).
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
    return this.db.dialect === "postgres" ? " FOR UPDATE SKIP LOCKED" : "";
  }

  /**
   * Claims up to `limit` queue heads that are due and unclaimed (or whose
   * claim expired), until `until`; returns them with their events.
   */
  claim(claim: string, nowMs: number, until: number, limit: number): Promise<ClaimedDelivery[]> {
    return this.db.transaction(async (tx) => {
      const ids = await tx.all<{ id: string }>(
        `UPDATE deliveries SET claim = ?, claimed_until = ? WHERE claimed_until <= ? AND id IN (
           SELECT id FROM deliveries WHERE status = 'pending' AND head = 1 AND next_at <= ? AND claimed_until <= ?
           ORDER BY next_at LIMIT ?${this.skipLocked}) RETURNING id`,
        [claim, until, nowMs, nowMs, nowMs, limit],
      );
      return this.withEvents(
        tx,
        ids.map((r) => r.id),
      );
    });
  }

  /**
   * Records an attempt under this node's claim and, when the delivery is done
   * with, claims the next one of its queue in the same commit (so a busy
   * queue costs one transaction per delivery). Returns the next claimed
   * delivery, or `lost: true` when the claim had expired and another node took it.
   */
  finish(
    row: DeliveryRow,
    claim: string,
    outcome: AttemptOutcome,
    nowMs: number,
    until: number,
  ): Promise<{ lost: boolean; next?: ClaimedDelivery }> {
    return this.db.transaction(async (tx) => {
      // The agent's row first, as the transactions that write its events take it: a delivery queued meanwhile
      // either commits before this look for the next head or sees this one done and becomes the head itself.
      if (this.db.dialect === "postgres") await tx.get("SELECT id FROM agents WHERE id = ? FOR UPDATE", [row.agent_id]);
      const n = outcome.next;
      const updated = await tx.get<{ attempts: number }>(
        "UPDATE deliveries SET attempts = attempts + 1, status = ?, next_at = ?, ended_at = ?, last_error = ?, claim = NULL, claimed_until = 0 WHERE id = ? AND claim = ? RETURNING attempts",
        [
          n.status,
          n.status === "pending" ? n.nextAt : row.next_at,
          n.status === "failed" ? n.endedAt : n.status === "delivered" ? outcome.startedAt : null,
          outcome.error,
          row.id,
          claim,
        ],
      );
      if (!updated) return { lost: true };
      await tx.run(
        "INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, http_status, error) VALUES (?, ?, ?, ?, ?, ?)",
        [row.id, updated.attempts, outcome.startedAt, outcome.durationMs, outcome.httpStatus, outcome.error],
      );
      if (n.status === "pending") return { lost: false };
      // The queue's new head; claimed here too when it is due and nobody holds it.
      const head = await tx.get<{ id: string; next_at: number; claimed_until: number }>(
        `UPDATE deliveries SET head = 1 WHERE id = (
           SELECT id FROM deliveries WHERE agent_id = ? AND subscriber = ? AND status = 'pending' ORDER BY event_seq LIMIT 1
         ) RETURNING id, next_at, claimed_until`,
        [row.agent_id, row.subscriber],
      );
      if (!head || Number(head.next_at) > nowMs || Number(head.claimed_until) > nowMs) return { lost: false };
      const next = await tx.get<{ id: string }>(
        "UPDATE deliveries SET claim = ?, claimed_until = ? WHERE id = ? AND claimed_until <= ? RETURNING id",
        [claim, until, head.id, nowMs],
      );
      if (!next) return { lost: false };
      const [claimed] = await this.withEvents(tx, [next.id]);
      return claimed ? { lost: false, next: claimed } : { lost: false };
    });
  }

  /** Gives a claim back (the daemon stops before sending), so the delivery is sent soon by whoever runs. */
  async release(id: string, claim: string): Promise<void> {
    await this.db.run("UPDATE deliveries SET claim = NULL, claimed_until = 0 WHERE id = ? AND claim = ?", [id, claim]);
  }

  /** At the start of the only daemon of a SQLite file, every claim is a dead process's. */
  async releaseAll(): Promise<number> {
    return (await this.db.run("UPDATE deliveries SET claim = NULL, claimed_until = 0 WHERE status = 'pending' AND claimed_until > 0"))
      .changes;
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
    const params: SqlValue[] = [org, page.before ?? "\u{10FFFF}"];
    let sql = "SELECT * FROM deliveries WHERE org = ? AND id < ?";
    if (page.status) {
      sql += " AND status = ?";
      params.push(page.status);
    }
    params.push(page.limit);
    return this.db.all<DeliveryRow & Row>(`${sql} ORDER BY id DESC LIMIT ?`, params);
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

  private async withEvents(tx: Tx, ids: readonly string[]): Promise<ClaimedDelivery[]> {
    if (ids.length === 0) return [];
    const rows = await tx.all<Row>(
      `SELECT d.*, e.type AS e_type, e.time AS e_time, e.subject AS e_subject, e.run AS e_run, e.data AS e_data
       FROM deliveries d JOIN events e ON e.agent_id = d.agent_id AND e.seq = d.event_seq
       WHERE d.id IN (${ids.map(() => "?").join(", ")}) ORDER BY d.next_at, d.event_seq`,
      ids,
    );
    return rows.map((r) => {
      const row = r as unknown as DeliveryRow & Record<string, SqlValue>;
      const event: EventRow = {
        agent_id: row.agent_id,
        org: row.org,
        seq: row.event_seq,
        id: row.event_id,
        type: r.e_type as string,
        time: r.e_time as string,
        subject: r.e_subject as string | null,
        run: r.e_run as string | null,
        data: r.e_data as string,
      };
      return { row, event: toEvent(event) };
    });
  }
}
