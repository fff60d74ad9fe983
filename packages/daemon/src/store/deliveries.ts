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

/** What a sender did with one claimed run: the attempts it made, in queue order, and the deliveries it did not send. */
export interface RunResult {
  attempts: readonly { row: DeliveryRow; outcome: AttemptOutcome }[];
  unsent: readonly DeliveryRow[];
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
const STATUS_CONDITION: Record<DeliveryStatusValue, string> = {
  pending: " AND status = 'pending'",
  delivered: " AND status = 'delivered'",
  failed: " AND status = 'failed'",
};
/** Parameters per delivery_attempts row. */
const ATTEMPT_VALUES = 6;
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
    return this.db.dialect === "postgres" ? " FOR UPDATE SKIP LOCKED" : "";
  }

  /** Claims up to `heads` runs (see `settle`) and records nothing: a sender's first look. */
  async claim(claim: string, nowMs: number, until: number, heads: number, runLength = 1): Promise<ClaimedDelivery[][]> {
    return (await this.settle(claim, [], nowMs, until, heads, runLength)).runs;
  }

  /**
   * One transaction for a sender's round: records what its finished runs did
   * (each attempt's outcome and log line; claims of rows it did not send are
   * given back), moves each finished queue's head on, and claims up to
   * `heads` new runs: a due, unclaimed (or expired) queue head and up to
   * `runLength - 1` deliveries behind it in its queue, all until `until`.
   * Rows whose claim was no longer this node's are returned as `lost`.
   */
  settle(
    claim: string,
    results: readonly RunResult[],
    nowMs: number,
    until: number,
    heads: number,
    runLength: number,
  ): Promise<{ lost: DeliveryRow[]; runs: ClaimedDelivery[][] }> {
    return this.db.transaction(async (tx) => {
      const lost = results.length > 0 ? await this.record(tx, claim, results) : [];
      const runs = heads > 0 ? await this.claimRuns(tx, claim, nowMs, until, heads, runLength) : [];
      return { lost, runs };
    });
  }

  private async record(tx: Tx, claim: string, results: readonly RunResult[]): Promise<DeliveryRow[]> {
    // The agents' rows first (in one order), as the transactions that write their events take them: a delivery
    // queued meanwhile either commits before this look for a queue's next head, or sees the run done and becomes
    // the head itself.
    if (this.db.dialect === "postgres") {
      const agents = [...new Set(results.flatMap((r) => [...r.attempts.map((a) => a.row), ...r.unsent].map((d) => d.agent_id)))].sort();
      if (agents.length > 0)
        await tx.all(`SELECT id FROM agents WHERE id IN (${agents.map(() => "?").join(", ")}) ORDER BY id FOR UPDATE`, agents);
    }
    const lost: DeliveryRow[] = [];
    const logged: SqlValue[] = [];
    for (const r of results) {
      let mine = true;
      let waits = false;
      for (const { row, outcome } of r.attempts) {
        const n = outcome.next;
        const updated = await tx.get<{ attempts: number }>(
          // One to be retried is now the lowest pending delivery of its queue (those before it in its run are done).
          "UPDATE deliveries SET attempts = attempts + 1, status = ?, head = ?, next_at = ?, ended_at = ?, last_error = ?, claim = NULL, claimed_until = 0 WHERE id = ? AND claim = ? RETURNING attempts",
          [
            n.status,
            n.status === "pending" ? 1 : 0,
            n.status === "pending" ? n.nextAt : row.next_at,
            n.status === "failed" ? n.endedAt : n.status === "delivered" ? outcome.startedAt : null,
            outcome.error,
            row.id,
            claim,
          ],
        );
        if (!updated) {
          lost.push(row);
          mine = false;
          continue;
        }
        if (n.status === "pending") waits = true;
        logged.push(row.id, updated.attempts, outcome.startedAt, outcome.durationMs, outcome.httpStatus, outcome.error);
      }
      if (r.unsent.length > 0)
        await tx.run(
          `UPDATE deliveries SET claim = NULL, claimed_until = 0 WHERE claim = ? AND id IN (${r.unsent.map(() => "?").join(", ")})`,
          [claim, ...r.unsent.map((u) => u.id)],
        );
      // A run that ended in a retry keeps its failed delivery at the head; one that lost its claim is another node's.
      const first = r.attempts[0]?.row;
      if (first && mine && !waits)
        await tx.run(
          `UPDATE deliveries SET head = 1 WHERE id = (
             SELECT id FROM deliveries WHERE agent_id = ? AND subscriber = ? AND status = 'pending' ORDER BY event_seq LIMIT 1
           )`,
          [first.agent_id, first.subscriber],
        );
    }
    for (let i = 0; i < logged.length; i += ATTEMPT_VALUES * MAX_ROWS_PER_INSERT) {
      const chunk = logged.slice(i, i + ATTEMPT_VALUES * MAX_ROWS_PER_INSERT);
      await tx.run(
        `INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, http_status, error) VALUES ${Array.from(
          { length: chunk.length / ATTEMPT_VALUES },
          () => "(?, ?, ?, ?, ?, ?)",
        ).join(", ")}`,
        chunk,
      );
    }
    return lost;
  }

  /** Claims due queue heads, each with the deliveries waiting behind it (its run), and reads their events. */
  private async claimRuns(
    tx: Tx,
    claim: string,
    nowMs: number,
    until: number,
    limit: number,
    runLength: number,
  ): Promise<ClaimedDelivery[][]> {
    const heads = await tx.all<{ id: string; agent_id: string; subscriber: string; event_seq: number }>(
      `UPDATE deliveries SET claim = ?, claimed_until = ? WHERE claimed_until <= ? AND id IN (
         SELECT id FROM deliveries WHERE status = 'pending' AND head = 1 AND next_at <= ? AND claimed_until <= ?
         ORDER BY next_at LIMIT ?${this.skipLocked}) RETURNING id, agent_id, subscriber, event_seq`,
      [claim, until, nowMs, nowMs, nowMs, limit],
    );
    const runIds: string[][] = [];
    for (const h of heads) {
      const ids = [h.id];
      runIds.push(ids);
      if (runLength <= 1) continue;
      // Behind the head, up to the next head (a delivery sent again on request heads a run of its own).
      const behind = await tx.all<{ id: string; head: number; claimed_until: number }>(
        "SELECT id, head, claimed_until FROM deliveries WHERE agent_id = ? AND subscriber = ? AND status = 'pending' AND event_seq > ? ORDER BY event_seq LIMIT ?",
        [h.agent_id, h.subscriber, h.event_seq, runLength - 1],
      );
      const end = behind.findIndex((b) => Number(b.head) === 1 || Number(b.claimed_until) > nowMs);
      const take = (end < 0 ? behind : behind.slice(0, end)).map((b) => b.id);
      if (take.length === 0) continue;
      const got = new Set(
        (
          await tx.all<{ id: string }>(
            `UPDATE deliveries SET claim = ?, claimed_until = ? WHERE claimed_until <= ? AND id IN (${take.map(() => "?").join(", ")}) RETURNING id`,
            [claim, until, nowMs, ...take],
          )
        ).map((r) => r.id),
      );
      // In queue order, with no gap: a delivery another claim took ends the run there.
      for (const id of take) {
        if (!got.has(id)) break;
        ids.push(id);
        got.delete(id);
      }
      if (got.size > 0)
        await tx.run(
          `UPDATE deliveries SET claim = NULL, claimed_until = 0 WHERE claim = ? AND id IN (${[...got].map(() => "?").join(", ")})`,
          [claim, ...got],
        );
    }
    const byId = new Map((await this.withEvents(tx, runIds.flat())).map((c) => [c.row.id, c]));
    return runIds
      .map((ids) => ids.map((id) => byId.get(id)).filter((c): c is ClaimedDelivery => c !== undefined))
      .filter((r) => r.length > 0);
  }

  /** At the start of the only daemon of a SQLite file, every claim is a dead process's. */
  async releaseAll(): Promise<number> {
    return (await this.db.run("UPDATE deliveries SET claim = NULL, claimed_until = 0 WHERE status = 'pending' AND claimed_until > 0"))
      .changes;
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
