import type { Db, Row, Tx } from "./db.js";

export type SlackMessageKind = "reply" | "approval";

/** A message Wardrik posted in a Slack thread (see migrations/sqlite/005_slack.sql). */
export interface SlackMessageRow {
  kind: SlackMessageKind;
  ref: string;
  channel: string;
  thread_ts: string;
  ts: string | null;
  state: string;
  decided_by: string | null;
  claimed_by: string | null;
  claimed_until: string | null;
  /** Post requests made whose answer was not stored (see 015_outbound_intents.sql). */
  sent: number;
  /** Posts made again while the thread could not be read for an earlier copy. */
  possible_duplicates: number;
  created_at: string;
  updated_at: string;
}

/** A call that waits for a person in a Slack conversation, with what its approval message shows. */
export interface SlackWaitingCall {
  call_id: string;
  run: string;
  agent_id: string;
  org: string;
  agent_name: string;
  tool: string;
  args: string;
  reason: string | null;
  conversation: string;
}

/** An approval message still showing its buttons, and where its call is now. */
export interface SlackOpenApproval extends SlackMessageRow {
  call_status: string;
  agent_name: string;
  tool: string;
  args: string;
  reason: string | null;
}

/** A reply message not yet given its turn's final text, and how the turn stands. */
export interface SlackOpenReply extends SlackMessageRow {
  turn_status: string;
  turn_reply: string | null;
  turn_reason: string | null;
}

/** A turn of a Slack conversation that ended without its reply posted. */
export interface SlackUnpostedReply {
  run: string;
  turn_status: string;
  turn_reply: string | null;
  turn_reason: string | null;
  conversation: string;
  org: string;
}

/** How long a request taken by another daemon process blocks a retry: after that, that process is taken to be gone. */
export const TAKEN_BY_OTHER_MS = 60_000;

/** How long a node's claim to post or update a message holds: a node that died holding one loses it after this. */
export const CLAIM_MS = 60_000;

function until(now: Date): string {
  return new Date(now.getTime() + CLAIM_MS).toISOString();
}

/**
 * What the Slack integration keeps: requests already taken (so a retried
 * event is not queued twice, even across a restart) and which Slack message
 * shows which reply or waiting call (so it is updated, not posted again).
 */
export class SlackTable {
  constructor(private readonly db: Db) {}

  /**
   * Takes a request under all of `keys` for `owner`. False when any key was
   * taken already: done, taken by this process, or taken moments ago by
   * another one. A key another process took long ago and never finished is
   * taken over (that process stopped before it could queue the message).
   */
  async take(keys: string[], owner: string, now: Date): Promise<boolean> {
    const at = now.toISOString();
    const staleBefore = new Date(now.getTime() - TAKEN_BY_OTHER_MS).toISOString();
    return this.db.transaction(async (tx) => {
      let fresh = true;
      for (const key of keys) {
        const inserted = await tx.run(
          "INSERT INTO slack_requests (key, owner, status, received_at) VALUES (?, ?, 'taken', ?) ON CONFLICT (key) DO NOTHING",
          [key, owner, at],
        );
        if (inserted.changes > 0) continue;
        const over = await tx.run(
          "UPDATE slack_requests SET owner = ?, received_at = ? WHERE key = ? AND status = 'taken' AND owner <> ? AND received_at < ?",
          [owner, at, key, owner, staleBefore],
        );
        if (over.changes === 0) fresh = false;
      }
      return fresh;
    });
  }

  /** The request's message is queued (or was ignored on purpose): a retry is a repeat. */
  async finish(keys: string[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      for (const key of keys) await tx.run("UPDATE slack_requests SET status = 'done' WHERE key = ?", [key]);
    });
  }

  /** Lets a retry take a request whose message could not be queued. */
  async release(keys: string[], owner: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      for (const key of keys) await tx.run("DELETE FROM slack_requests WHERE key = ? AND owner = ? AND status = 'taken'", [key, owner]);
    });
  }

  /** Forgets requests received before `before` (Slack stops retrying within the hour). */
  async purge(before: Date): Promise<void> {
    await this.db.transaction((tx) => tx.run("DELETE FROM slack_requests WHERE received_at < ?", [before.toISOString()]));
  }

  message(kind: SlackMessageKind, ref: string): Promise<SlackMessageRow | undefined> {
    return this.db.get<SlackMessageRow & Row>("SELECT * FROM slack_messages WHERE kind = ? AND ref = ?", [kind, ref]);
  }

  /**
   * Claims posting a message for `node`, with the intent to post stored
   * (`sent` counts it) before the request goes out. Undefined when it is not
   * this node's to post: it is posted, or being posted by a live node (an
   * earlier claim that never posted and ran out is taken: its node died).
   * `earlier` is how many requests before this one may have reached Slack
   * without their answer being stored.
   */
  async claim(
    m: { kind: SlackMessageKind; ref: string; channel: string; threadTs: string; state: string },
    node: string,
    now: Date,
  ): Promise<{ earlier: number } | undefined> {
    const at = now.toISOString();
    const row = await this.db.transaction((tx) =>
      tx.get<{ sent: number }>(
        `INSERT INTO slack_messages (kind, ref, channel, thread_ts, ts, state, decided_by, claimed_by, claimed_until, sent, created_at, updated_at)
         VALUES (?, ?, ?, ?, NULL, ?, NULL, ?, ?, 1, ?, ?)
         ON CONFLICT (kind, ref) DO UPDATE SET claimed_by = excluded.claimed_by, claimed_until = excluded.claimed_until,
           sent = slack_messages.sent + 1, updated_at = excluded.updated_at
         WHERE slack_messages.ts IS NULL AND (slack_messages.claimed_until IS NULL OR slack_messages.claimed_until < excluded.updated_at)
         RETURNING sent`,
        [m.kind, m.ref, m.channel, m.threadTs, m.state, node, until(now), at, at],
      ),
    );
    return row ? { earlier: Number(row.sent) - 1 } : undefined;
  }

  /** The posted message's ts; the claim to post it is done. */
  async posted(kind: SlackMessageKind, ref: string, ts: string, now: Date): Promise<void> {
    await this.write(
      "UPDATE slack_messages SET ts = ?, claimed_by = NULL, claimed_until = NULL, updated_at = ? WHERE kind = ? AND ref = ?",
      [ts, now.toISOString(), kind, ref],
    );
  }

  /**
   * A post that came to no message: Slack refused it (its request is taken
   * back from `sent`), or its answer never came (`unknown`: it may have
   * posted). Either way the claim ends, and the next try may post.
   */
  async notPosted(kind: SlackMessageKind, ref: string, unknown: boolean): Promise<void> {
    await this.write(
      `UPDATE slack_messages SET claimed_by = NULL, claimed_until = NULL${unknown ? "" : ", sent = sent - 1"} WHERE kind = ? AND ref = ? AND ts IS NULL`,
      [kind, ref],
    );
  }

  /** A post made again without a look at the thread for an earlier copy: Slack may show the message twice. */
  async possibleDuplicate(kind: SlackMessageKind, ref: string): Promise<void> {
    await this.write("UPDATE slack_messages SET possible_duplicates = possible_duplicates + 1 WHERE kind = ? AND ref = ?", [kind, ref]);
  }

  /**
   * Ends the claims held under `node` by an earlier process of it (a restart
   * under the same name): what it was posting or updating is done again now,
   * not once the claims run out.
   */
  async releaseClaimsOf(node: string): Promise<void> {
    await this.write("UPDATE slack_messages SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = ?", [node]);
  }

  /**
   * Claims updating a posted message that is in `state` for `node`: true when
   * this node is to update it; false when its state moved on or a live node
   * holds the claim.
   */
  async claimUpdate(kind: SlackMessageKind, ref: string, state: string, node: string, now: Date): Promise<boolean> {
    const res = await this.db.transaction((tx) =>
      tx.run(
        `UPDATE slack_messages SET claimed_by = ?, claimed_until = ?
          WHERE kind = ? AND ref = ? AND state = ? AND ts IS NOT NULL AND (claimed_until IS NULL OR claimed_until < ?)`,
        [node, until(now), kind, ref, state, now.toISOString()],
      ),
    );
    return res.changes > 0;
  }

  /** Gives up `node`'s claim on a message (the update failed; another try may claim it). */
  async dropClaim(kind: SlackMessageKind, ref: string, node: string): Promise<void> {
    await this.write("UPDATE slack_messages SET claimed_by = NULL, claimed_until = NULL WHERE kind = ? AND ref = ? AND claimed_by = ?", [
      kind,
      ref,
      node,
    ]);
  }

  /** The message's new state; any claim on it is done. */
  async setState(kind: SlackMessageKind, ref: string, state: string, now: Date, decidedBy?: string): Promise<void> {
    await this.write(
      "UPDATE slack_messages SET state = ?, decided_by = COALESCE(?, decided_by), claimed_by = NULL, claimed_until = NULL, updated_at = ? WHERE kind = ? AND ref = ?",
      [state, decidedBy ?? null, now.toISOString(), kind, ref],
    );
  }

  /**
   * Notes who clicked Approve or Deny on a call's open approval message, before
   * the decision commits: whichever node then shows the decision names them.
   */
  async noteDecider(callId: string, user: string): Promise<void> {
    await this.write("UPDATE slack_messages SET decided_by = ? WHERE kind = 'approval' AND ref = ? AND state = 'open'", [user, callId]);
  }

  /** The click decided nothing (the call was decided otherwise): it is not shown as theirs. */
  async forgetDecider(callId: string, user: string): Promise<void> {
    await this.write(
      "UPDATE slack_messages SET decided_by = NULL WHERE kind = 'approval' AND ref = ? AND decided_by = ? AND state = 'open'",
      [callId, user],
    );
  }

  /** The conversation key and org of a turn. */
  conversationOfRun(run: string): Promise<{ conversation: string; org: string; agent_id: string } | undefined> {
    return this.db.get<{ conversation: string; org: string; agent_id: string }>(
      "SELECT cv.key AS conversation, a.org AS org, a.id AS agent_id FROM turns t JOIN conversations cv ON cv.id = t.conversation_id JOIN agents a ON a.id = t.agent_id WHERE t.id = ?",
      [run],
    );
  }

  /** Calls waiting for a person in Slack conversations whose approval message was never posted, and nobody is posting it. */
  waitingWithoutMessage(now: Date): Promise<SlackWaitingCall[]> {
    return this.db.all<SlackWaitingCall & Row>(
      `SELECT c.id AS call_id, c.run AS run, a.id AS agent_id, a.org AS org, a.name AS agent_name, c.tool AS tool, c.args AS args,
              c.reason AS reason, cv.key AS conversation
         FROM calls c
         JOIN turns t ON t.id = c.run
         JOIN conversations cv ON cv.id = t.conversation_id
         JOIN agents a ON a.id = c.agent_id
         LEFT JOIN slack_messages m ON m.kind = 'approval' AND m.ref = c.id
        WHERE c.status = 'waiting' AND cv.key LIKE 'slack:%' AND (m.ref IS NULL OR (m.ts IS NULL AND (m.claimed_until IS NULL OR m.claimed_until < ?)))
        ORDER BY c.id`,
      [now.toISOString()],
    );
  }

  /** Approval messages still showing buttons although their call is no longer waiting (decided while Slack could not be told). */
  decidedButOpen(now: Date): Promise<SlackOpenApproval[]> {
    return this.db.all<SlackOpenApproval & Row>(
      `SELECT m.*, c.status AS call_status, a.name AS agent_name, c.tool AS tool, c.args AS args, c.reason AS reason
         FROM slack_messages m
         JOIN calls c ON c.id = m.ref
         JOIN agents a ON a.id = c.agent_id
        WHERE m.kind = 'approval' AND m.state = 'open' AND m.ts IS NOT NULL AND c.status <> 'waiting'
          AND (m.claimed_until IS NULL OR m.claimed_until < ?)
        ORDER BY m.ref`,
      [now.toISOString()],
    );
  }

  /**
   * Turns of Slack conversations that ended between `endedAfter` and
   * `endedBefore` without a reply message, and nobody is posting one (Slack
   * refused the post, or the node died first).
   */
  endedWithoutReply(now: Date, endedBefore: Date, endedAfter: Date): Promise<SlackUnpostedReply[]> {
    return this.db.all<SlackUnpostedReply & Row>(
      `SELECT t.id AS run, t.status AS turn_status, t.reply AS turn_reply, t.reason AS turn_reason, cv.key AS conversation, a.org AS org
         FROM turns t
         JOIN conversations cv ON cv.id = t.conversation_id
         JOIN agents a ON a.id = t.agent_id
         LEFT JOIN slack_messages m ON m.kind = 'reply' AND m.ref = t.id
        WHERE t.ended_at < ? AND t.ended_at > ? AND t.status IN ('completed', 'failed', 'cancelled') AND cv.key LIKE 'slack:%'
          AND (m.ref IS NULL OR (m.ts IS NULL AND (m.claimed_until IS NULL OR m.claimed_until < ?)))
        ORDER BY t.id`,
      [endedBefore.toISOString(), endedAfter.toISOString(), now.toISOString()],
    );
  }

  /** Reply messages of turns that ended before `endedBefore` without the message being given their last word. */
  endedButStreaming(now: Date, endedBefore: Date): Promise<SlackOpenReply[]> {
    return this.db.all<SlackOpenReply & Row>(
      `SELECT m.*, t.status AS turn_status, t.reply AS turn_reply, t.reason AS turn_reason
         FROM slack_messages m
         JOIN turns t ON t.id = m.ref
        WHERE m.kind = 'reply' AND m.state = 'streaming' AND m.ts IS NOT NULL AND t.status IN ('completed', 'failed', 'cancelled')
          AND t.ended_at < ? AND (m.claimed_until IS NULL OR m.claimed_until < ?)
        ORDER BY m.ref`,
      [endedBefore.toISOString(), now.toISOString()],
    );
  }

  private async write(sql: string, params: (string | null)[]): Promise<void> {
    await this.db.transaction((tx: Tx) => tx.run(sql, params));
  }
}
