import type { Db, Row, SqlValue, Tx } from "./db.js";
import { placeholders } from "./writer.js";

export type FiringStatus = "pending" | "queued" | "failed";

/** A firing of one trigger: the message it will queue, keyed so that it happens once. */
export interface NewFiring {
  id: string;
  org: string;
  agentId: string;
  triggerKey: string;
  /** The schedule's time, the inbound webhook's ID, or the source event's ID. */
  fireKey: string;
  conversation: string;
  text: string;
}

export interface FiringRow {
  id: string;
  org: string;
  agent_id: string;
  trigger_key: string;
  fire_key: string;
  conversation: string;
  text: string;
  status: FiringStatus;
  message_id: string | null;
  claimed_until: number;
  claim: string | null;
  created_at: string;
  queued_at: string | null;
  error: string | null;
}

const COLUMNS = 10;
const MAX_ROWS_PER_INSERT = 400;

/**
 * Trigger firings (008_webhooks_triggers.sql). The unique (agent, trigger,
 * fire key) makes each firing happen once among any number of daemons: a
 * firing is inserted pending (claimed by the node that inserts it, or free
 * for any node to claim), and `markQueued` turns it queued inside the very
 * transaction that queues its message, under the claim's token.
 */
export class TriggerFiringsTable {
  constructor(private readonly db: Db) {}

  /** Inserts a firing claimed by `claim` until `until`; false when it was inserted before (by anyone). */
  async claimNew(f: NewFiring, claim: string, until: number, nowIso: string): Promise<boolean> {
    const r = await this.db.transaction((tx) =>
      tx.run(
        `INSERT INTO trigger_firings (id, org, agent_id, trigger_key, fire_key, conversation, text, status, claimed_until, claim, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?) ON CONFLICT (agent_id, trigger_key, fire_key) DO NOTHING`,
        [f.id, f.org, f.agentId, f.triggerKey, f.fireKey, f.conversation, f.text, until, claim, nowIso],
      ),
    );
    return r.changes > 0;
  }

  /** Unclaimed pending firings, written in the transaction of the events they come from (one statement). */
  async insertPending(tx: Tx, rows: readonly NewFiring[], nowIso: string): Promise<void> {
    for (let i = 0; i < rows.length; i += MAX_ROWS_PER_INSERT) {
      const chunk = rows.slice(i, i + MAX_ROWS_PER_INSERT);
      const params: SqlValue[] = [];
      for (const f of chunk) params.push(f.id, f.org, f.agentId, f.triggerKey, f.fireKey, f.conversation, f.text, "pending", 0, nowIso);
      await tx.run(
        `INSERT INTO trigger_firings (id, org, agent_id, trigger_key, fire_key, conversation, text, status, claimed_until, created_at) VALUES ${placeholders(chunk.length, COLUMNS)} ON CONFLICT (agent_id, trigger_key, fire_key) DO NOTHING`,
        params,
      );
    }
  }

  /** Claims pending firings nobody holds (new ones, or a crashed node's), oldest first. */
  async claimPending(claim: string, nowMs: number, until: number, limit: number): Promise<FiringRow[]> {
    const skip = this.db.dialect.skipLocked;
    const rows = await this.db.transaction((tx) =>
      tx.all<FiringRow & Row>(
        `UPDATE trigger_firings SET claim = ?, claimed_until = ? WHERE claimed_until <= ? AND id IN (
           SELECT id FROM trigger_firings WHERE status = 'pending' AND claimed_until <= ? ORDER BY id LIMIT ?${skip}
         ) RETURNING *`,
        [claim, until, nowMs, nowMs, limit],
      ),
    );
    return rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Inside the transaction that queued the message: false when the claim was lost (another node fired it). */
  async markQueued(tx: Tx, id: string, claim: string, messageId: string, nowIso: string): Promise<boolean> {
    const r = await tx.run(
      "UPDATE trigger_firings SET status = 'queued', message_id = ?, queued_at = ?, claim = NULL, claimed_until = 0 WHERE id = ? AND claim = ? AND status = 'pending'",
      [messageId, nowIso, id, claim],
    );
    return r.changes > 0;
  }

  /**
   * After the message was queued without its firing marked in the same commit
   * (another message of the same text took the mark): records it now.
   */
  async markQueuedLate(id: string, claim: string, messageId: string, nowIso: string): Promise<void> {
    await this.db.run(
      "UPDATE trigger_firings SET status = 'queued', message_id = ?, queued_at = COALESCE(queued_at, ?), claim = NULL, claimed_until = 0 WHERE id = ? AND (claim = ? OR status = 'queued')",
      [messageId, nowIso, id, claim],
    );
  }

  /** Whether a pending firing waits for a node to claim it (a cheap read before a claiming write). */
  async anyDue(nowMs: number): Promise<boolean> {
    return (
      (await this.db.get("SELECT id FROM trigger_firings WHERE status = 'pending' AND claimed_until <= ? LIMIT 1", [nowMs])) !== undefined
    );
  }

  /** A firing that cannot queue its message (its agent is unreadable or gone); kept with the reason. */
  async fail(id: string, claim: string, error: string, nowIso: string): Promise<void> {
    await this.db.run(
      "UPDATE trigger_firings SET status = 'failed', error = ?, queued_at = ?, claim = NULL, claimed_until = 0 WHERE id = ? AND claim = ?",
      [error, nowIso, id, claim],
    );
  }

  /** At the start of the only daemon of a SQLite file, a pending firing's claim is a dead process's: free to queue now. */
  async releaseAll(): Promise<number> {
    return (await this.db.run("UPDATE trigger_firings SET claim = NULL, claimed_until = 0 WHERE status = 'pending' AND claimed_until > 0"))
      .changes;
  }

  /** Gives a claim back so the firing is tried again (by this node or another) after `retryAt`. */
  async release(id: string, claim: string, retryAt = 0): Promise<void> {
    await this.db.run("UPDATE trigger_firings SET claim = NULL, claimed_until = ? WHERE id = ? AND claim = ?", [retryAt, id, claim]);
  }

  find(agentId: string, triggerKey: string, fireKey: string): Promise<FiringRow | undefined> {
    return this.db.get<FiringRow & Row>("SELECT * FROM trigger_firings WHERE agent_id = ? AND trigger_key = ? AND fire_key = ?", [
      agentId,
      triggerKey,
      fireKey,
    ]);
  }

  /** Each trigger's latest firing that queued a message. */
  latest(agentId: string): Promise<FiringRow[]> {
    return this.db.all<FiringRow & Row>(
      `SELECT f.* FROM trigger_firings f WHERE f.agent_id = ? AND f.status = 'queued' AND f.id = (
         SELECT g.id FROM trigger_firings g WHERE g.agent_id = f.agent_id AND g.trigger_key = f.trigger_key AND g.status = 'queued' ORDER BY g.created_at DESC, g.id DESC LIMIT 1)`,
      [agentId],
    );
  }

  /** The latest scheduled time a schedule trigger fired for (its fire keys are ISO times), for catching up. */
  async lastFireKey(agentId: string, triggerKey: string): Promise<string | undefined> {
    const r = await this.db.get<{ k: string | null }>(
      "SELECT MAX(fire_key) AS k FROM trigger_firings WHERE agent_id = ? AND trigger_key = ?",
      [agentId, triggerKey],
    );
    return r?.k ?? undefined;
  }
}
