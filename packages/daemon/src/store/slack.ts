import type { Db, Row, Tx } from "./db.js";

export type SlackMessageKind = "reply" | "approval";

/** A message Wardrik posted in a Slack thread (see migrations/sqlite/004_slack.sql). */
export interface SlackMessageRow {
  kind: SlackMessageKind;
  ref: string;
  channel: string;
  thread_ts: string;
  ts: string | null;
  state: string;
  decided_by: string | null;
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

/** How long a request taken by another daemon process blocks a retry: after that, that process is taken to be gone. */
export const TAKEN_BY_OTHER_MS = 60_000;

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

  /** Records that a message is about to be posted; false when one is recorded already (posted, or being posted). */
  async claim(m: { kind: SlackMessageKind; ref: string; channel: string; threadTs: string; state: string }, now: Date): Promise<boolean> {
    const at = now.toISOString();
    const res = await this.db.transaction((tx) =>
      tx.run(
        "INSERT INTO slack_messages (kind, ref, channel, thread_ts, ts, state, decided_by, created_at, updated_at) VALUES (?, ?, ?, ?, NULL, ?, NULL, ?, ?) ON CONFLICT (kind, ref) DO NOTHING",
        [m.kind, m.ref, m.channel, m.threadTs, m.state, at, at],
      ),
    );
    return res.changes > 0;
  }

  /** The posted message's ts. */
  async posted(kind: SlackMessageKind, ref: string, ts: string, now: Date): Promise<void> {
    await this.write("UPDATE slack_messages SET ts = ?, updated_at = ? WHERE kind = ? AND ref = ?", [ts, now.toISOString(), kind, ref]);
  }

  /** A claim whose post failed: the next try may post again. */
  async unclaim(kind: SlackMessageKind, ref: string): Promise<void> {
    await this.write("DELETE FROM slack_messages WHERE kind = ? AND ref = ? AND ts IS NULL", [kind, ref]);
  }

  async setState(kind: SlackMessageKind, ref: string, state: string, now: Date, decidedBy?: string): Promise<void> {
    await this.write(
      "UPDATE slack_messages SET state = ?, decided_by = COALESCE(?, decided_by), updated_at = ? WHERE kind = ? AND ref = ?",
      [state, decidedBy ?? null, now.toISOString(), kind, ref],
    );
  }

  /** The conversation key and org of a turn. */
  conversationOfRun(run: string): Promise<{ conversation: string; org: string; agent_id: string } | undefined> {
    return this.db.get<{ conversation: string; org: string; agent_id: string }>(
      "SELECT cv.key AS conversation, a.org AS org, a.id AS agent_id FROM turns t JOIN conversations cv ON cv.id = t.conversation_id JOIN agents a ON a.id = t.agent_id WHERE t.id = ?",
      [run],
    );
  }

  /** Calls waiting for a person in Slack conversations whose approval message was never posted (a crash in between). */
  waitingWithoutMessage(): Promise<SlackWaitingCall[]> {
    return this.db.all<SlackWaitingCall & Row>(
      `SELECT c.id AS call_id, c.run AS run, a.id AS agent_id, a.org AS org, a.name AS agent_name, c.tool AS tool, c.args AS args,
              c.reason AS reason, cv.key AS conversation
         FROM calls c
         JOIN turns t ON t.id = c.run
         JOIN conversations cv ON cv.id = t.conversation_id
         JOIN agents a ON a.id = c.agent_id
         LEFT JOIN slack_messages m ON m.kind = 'approval' AND m.ref = c.id
        WHERE c.status = 'waiting' AND cv.key LIKE 'slack:%' AND (m.ref IS NULL OR m.ts IS NULL)
        ORDER BY c.id`,
    );
  }

  /** Approval messages still showing buttons although their call is no longer waiting (decided while Slack could not be told). */
  decidedButOpen(): Promise<SlackOpenApproval[]> {
    return this.db.all<SlackOpenApproval & Row>(
      `SELECT m.*, c.status AS call_status, a.name AS agent_name, c.tool AS tool, c.args AS args, c.reason AS reason
         FROM slack_messages m
         JOIN calls c ON c.id = m.ref
         JOIN agents a ON a.id = c.agent_id
        WHERE m.kind = 'approval' AND m.state = 'open' AND m.ts IS NOT NULL AND c.status <> 'waiting'
        ORDER BY m.ref`,
    );
  }

  /** Reply messages of turns that ended without the message being given their last word. */
  endedButStreaming(): Promise<SlackOpenReply[]> {
    return this.db.all<SlackOpenReply & Row>(
      `SELECT m.*, t.status AS turn_status, t.reply AS turn_reply, t.reason AS turn_reason
         FROM slack_messages m
         JOIN turns t ON t.id = m.ref
        WHERE m.kind = 'reply' AND m.state = 'streaming' AND m.ts IS NOT NULL AND t.status IN ('completed', 'failed', 'cancelled')
        ORDER BY m.ref`,
    );
  }

  private async write(sql: string, params: (string | null)[]): Promise<void> {
    await this.db.transaction((tx: Tx) => tx.run(sql, params));
  }
}
