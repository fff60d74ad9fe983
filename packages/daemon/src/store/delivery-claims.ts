import type { Db, Row, SqlValue, Tx } from "./db.js";
import { MAX_ROWS_PER_INSERT } from "./deliveries.js";
import type { EventRow } from "./events.js";

/** What a sender needs of a delivery it holds a claim on. */
export interface ClaimedRow {
  id: string;
  agent_id: string;
  subscriber: string;
  event_id: string;
  event_seq: number;
  attempts: number;
  next_at: number;
  window_from: number;
  /** When this node's claim lapses (epoch ms): another node may take the delivery after it. */
  claimed_until: number;
  /** It was in the run of a sender that died holding it: the subscriber may have had it already. */
  maybe_sent: boolean;
}

/** A delivery this node holds a claim on, with its event's row as stored (the sender builds the body from its text). */
export interface ClaimedDelivery {
  row: ClaimedRow;
  event: EventRow;
}

/** What a sender did with one claimed run: the attempts it made, in queue order, and the deliveries it did not send. */
export interface RunResult {
  attempts: readonly { row: ClaimedRow; outcome: AttemptOutcome }[];
  unsent: readonly ClaimedRow[];
}

/** What one attempt came to; `next` decides whether the delivery is retried, dead-lettered or done. */
export interface AttemptOutcome {
  startedAt: string;
  durationMs: number;
  httpStatus: number | null;
  error: string | null;
  next: { status: "delivered" } | { status: "failed"; endedAt: string } | { status: "pending"; nextAt: number };
}

/** Parameters per delivery_attempts row. */
const ATTEMPT_VALUES = 6;

/**
 * How senders take deliveries from the outbox (the `deliveries` table, see
 * DeliveriesTable) and give back what they did: each round of a sender is
 * one transaction, so a run of many deliveries costs one commit. Claims are
 * leases (`claim`, `claimed_until`): among several daemons on one PostgreSQL
 * database each delivery is sent by one node at a time, and a node whose
 * claim lapsed has its outcomes refused. A claim notes the run it covers
 * (`run_end`) before any request goes out: a sender that dies leaves it,
 * and the next one counts what it sends of that run as possible repeats.
 */
export class DeliveryClaims {
  constructor(private readonly db: Db) {}

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
  ): Promise<{ lost: ClaimedRow[]; runs: ClaimedDelivery[][] }> {
    return this.db.transaction(async (tx) => {
      const lost = results.length > 0 ? await this.record(tx, claim, results) : [];
      const runs = heads > 0 ? await this.claimRuns(tx, claim, nowMs, until, heads, runLength) : [];
      return { lost, runs };
    });
  }

  /** `FOR UPDATE SKIP LOCKED` where transactions run at once (PostgreSQL); SQLite runs one writer at a time. */
  private get skipLocked(): string {
    return this.db.dialect.skipLocked;
  }

  private async record(tx: Tx, claim: string, results: readonly RunResult[]): Promise<ClaimedRow[]> {
    // The agents' rows first (in one order), as the transactions that write their events take them: a delivery
    // queued meanwhile either commits before this look for a queue's next head, or sees the run done and becomes
    // the head itself.
    if (this.db.dialect.concurrentWriters) {
      const agents = [...new Set(results.map((r) => (r.attempts[0]?.row ?? r.unsent[0]!).agent_id))].sort();
      if (agents.length > 0)
        await tx.all(`SELECT id FROM agents WHERE id IN (${agents.map(() => "?").join(", ")}) ORDER BY id FOR UPDATE`, agents);
    }
    const lost: ClaimedRow[] = [];
    const logged: SqlValue[] = [];
    for (const r of results) {
      const head = r.attempts[0]?.row ?? r.unsent[0];
      if (!head) continue;
      // The run is this node's while its head's claim is: the deliveries behind it were claimed with it.
      if (r.attempts.length === 0) {
        await tx.run("UPDATE deliveries SET claim = NULL, claimed_until = 0 WHERE id = ? AND claim = ?", [head.id, claim]);
        continue;
      }
      let mine = true;
      let waits = false;
      for (const [i, { row, outcome }] of r.attempts.entries()) {
        const n = outcome.next;
        const changed = await tx.run(
          // One to be retried is now the lowest pending delivery of its queue (those before it in its run are done).
          `UPDATE deliveries SET attempts = ?, status = ?, head = ?, next_at = ?, ended_at = ?, last_error = ?, claim = NULL, claimed_until = 0,
             possible_repeats = possible_repeats + ?
           WHERE id = ? AND ${i === 0 ? "claim = ?" : "status = ?"}`,
          [
            row.attempts + 1,
            n.status,
            n.status === "pending" ? 1 : 0,
            n.status === "pending" ? n.nextAt : row.next_at,
            n.status === "failed" ? n.endedAt : n.status === "delivered" ? outcome.startedAt : null,
            outcome.error,
            row.maybe_sent ? 1 : 0,
            row.id,
            i === 0 ? claim : "pending",
          ],
        );
        if (changed.changes === 0) {
          if (i > 0) continue;
          // The head's claim lapsed and another node took the run: none of its outcomes are this node's to record.
          mine = false;
          lost.push(...r.attempts.map((a) => a.row));
          break;
        }
        if (n.status === "pending") waits = true;
        logged.push(row.id, row.attempts + 1, outcome.startedAt, outcome.durationMs, outcome.httpStatus, outcome.error);
      }
      // A run that ended in a retry keeps its failed delivery at the head; one that lost its claim is another node's.
      if (mine && !waits)
        await tx.run(
          `UPDATE deliveries SET head = 1 WHERE id = (
             SELECT id FROM deliveries WHERE agent_id = ? AND subscriber = ? AND status = 'pending' ORDER BY event_seq LIMIT 1
           )`,
          [head.agent_id, head.subscriber],
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

  /**
   * Claims due queue heads and reads each one's run: the head and the
   * deliveries behind it, up to the next head (a delivery sent again on
   * request heads a run of its own), with their events. Only the head's row
   * carries the claim: nobody takes the rows behind a head but its holder.
   */
  private async claimRuns(
    tx: Tx,
    claim: string,
    nowMs: number,
    until: number,
    limit: number,
    runLength: number,
  ): Promise<ClaimedDelivery[][]> {
    // A head another sender claimed and never gave back (it died) comes with the run it had: claim and run_end.
    const heads = await tx.all<{
      id: string;
      agent_id: string;
      subscriber: string;
      event_seq: number;
      claim: string | null;
      run_end: number | null;
    }>(
      `SELECT id, agent_id, subscriber, event_seq, claim, run_end FROM deliveries
       WHERE status = 'pending' AND head = 1 AND next_at <= ? AND claimed_until <= ?
       ORDER BY next_at LIMIT ?${this.skipLocked}`,
      [nowMs, nowMs, limit],
    );
    const runs: ClaimedDelivery[][] = [];
    for (const h of heads) {
      const rows = await tx.all<RunRow>(
        `SELECT d.id, d.agent_id, d.subscriber, d.event_id, d.event_seq, d.attempts, d.next_at, d.window_from, d.head,
           e.org, e.type, e.time, e.subject, e.run, e.data
         FROM deliveries d JOIN events e ON e.agent_id = d.agent_id AND e.seq = d.event_seq
         WHERE d.agent_id = ? AND d.subscriber = ? AND d.status = 'pending' AND d.event_seq >= ?
         ORDER BY d.event_seq LIMIT ?`,
        [h.agent_id, h.subscriber, h.event_seq, runLength],
      );
      const run: ClaimedDelivery[] = [];
      for (const r of rows) {
        if (run.length > 0 && Number(r.head) === 1) break;
        run.push({
          row: {
            id: r.id,
            agent_id: r.agent_id,
            subscriber: r.subscriber,
            event_id: r.event_id,
            event_seq: Number(r.event_seq),
            attempts: Number(r.attempts),
            next_at: Number(r.next_at),
            window_from: Number(r.window_from),
            claimed_until: until,
            maybe_sent: h.claim !== null && h.run_end !== null && Number(r.event_seq) <= Number(h.run_end),
          },
          event: {
            agent_id: r.agent_id,
            org: r.org,
            seq: Number(r.event_seq),
            id: r.event_id,
            type: r.type,
            time: r.time,
            subject: r.subject,
            run: r.run,
            data: r.data,
          },
        });
      }
      // The intent, stored before any request: this sender's claim, and how far its run goes.
      await tx.run("UPDATE deliveries SET claim = ?, claimed_until = ?, run_end = ? WHERE id = ?", [
        claim,
        until,
        run.at(-1)?.row.event_seq ?? h.event_seq,
        h.id,
      ]);
      // The head itself comes first; were its event gone, nothing of the queue could be sent in order.
      if (run[0]?.row.id === h.id) runs.push(run);
    }
    return runs;
  }
}

/** A delivery of a run as read with its event. */
type RunRow = Omit<ClaimedRow, "claimed_until" | "maybe_sent"> &
  Row & { head: number; org: string; type: string; time: string; subject: string | null; run: string | null; data: string };
