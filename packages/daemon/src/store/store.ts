import { createHash } from "node:crypto";
import { EVENT_TYPE_PREFIX, type EventType } from "@wardrik/protocol";
import type { EventBus, StoredEvent } from "../events/event-bus.js";
import type { Clock, IdGenerator } from "../ids.js";
import type { HistoryEntry, StoredMessage } from "../runtime/messages.js";
import type { Db, Row, SqlValue, Tx } from "./db.js";

/**
 * The format of saved turns and agent definitions. A change that would alter
 * how an unfinished turn resumes bumps it; turns keep the format they were
 * saved with, and a turn from a newer format makes its agent unreadable
 * instead of being resumed wrongly.
 */
export const STATE_FORMAT = 1;

/** Saved state that cannot be read: the agent becomes unreadable rather than the daemon failing. */
export class StateError extends Error {}

export type AgentStatusValue = "idle" | "running" | "parked" | "asleep" | "unreadable";

export interface AgentRow {
  id: string;
  org: string;
  name: string;
  source: "file" | "api";
  definition: string | null;
  format: number;
  file: string | null;
  status: AgentStatusValue;
  reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface ConversationRow {
  id: string;
  agent_id: string;
  key: string;
  summary: string | null;
  summary_upto: number;
  created_at: string;
}

export type TurnStatusValue = "running" | "parked" | "completed" | "failed" | "cancelled";
export interface TurnRow {
  id: string;
  agent_id: string;
  conversation_id: string;
  status: TurnStatusValue;
  reason: string | null;
  reply: string | null;
  iterations: number;
  rounds: number;
  /** Rounds whose results were appended to the history. */
  rounds_done: number;
  spend_usd: number;
  format: number;
  started_at: string;
  ended_at: string | null;
}

export type CallStatus = "planned" | "approved" | "waiting" | "running" | "completed" | "failed" | "denied" | "killed";
export const FINAL_CALL_STATUSES: ReadonlySet<CallStatus> = new Set(["completed", "failed", "denied", "killed"]);

export interface CallRow {
  id: string;
  run: string;
  round: number;
  position: number;
  agent_id: string;
  model_call_id: string;
  tool: string;
  args: string;
  status: CallStatus;
  read_only: number;
  idempotent: number;
  idempotency_key: string;
  decision: string | null;
  reason: string | null;
  rule: string | null;
  result: string | null;
  cost_usd: number;
  attempts: number;
  started_at: string | null;
  ended_at: string | null;
}

export interface AgentRef {
  id: string;
  org: string;
}

export interface EmitOptions {
  run?: string;
  subject?: string;
}

/** A transaction plus the events it will publish once it commits. */
export interface Writer extends Tx {
  emit(agent: AgentRef, type: EventType, data: Record<string, unknown>, options?: EmitOptions): Promise<StoredEvent>;
  now: string;
}

export interface NewCall {
  id: string;
  modelCallId: string;
  tool: string;
  args: unknown;
  readOnly: boolean;
  idempotent: boolean;
  /** Decided when the round is saved: `running` calls start right after the commit. */
  status?: "planned" | "waiting" | "running" | "failed" | "denied";
  decision?: string;
  reason?: string;
  rule?: string | null;
  result?: unknown;
}

export interface SpendToday {
  model_usd: number;
  tools_usd: number;
}

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/**
 * Domain operations over the SQL seam. Every state change commits together
 * with the events that describe it (`tx`), and those events are published
 * to followers only after the commit.
 */
export class Store {
  constructor(
    readonly db: Db,
    private readonly bus: EventBus,
    readonly ids: IdGenerator,
    readonly clock: Clock,
  ) {}

  async tx<T>(fn: (w: Writer) => Promise<T>): Promise<T> {
    const pending: StoredEvent[] = [];
    const now = this.clock.now().toISOString();
    const body = (tx: Tx): Promise<T> => {
      pending.length = 0;
      const writer: Writer = {
        now,
        run: (sql, params) => tx.run(sql, params),
        get: <R extends Row>(sql: string, params?: readonly SqlValue[]) => tx.get<R>(sql, params),
        all: <R extends Row>(sql: string, params?: readonly SqlValue[]) => tx.all<R>(sql, params),
        emit: async (agent, type, data, options = {}) => {
          const event = await this.insertEvent(tx, agent, type, data, options, now);
          pending.push(event);
          return event;
        },
      };
      return fn(writer);
    };
    let result: T;
    try {
      result = await this.db.transaction(body);
    } catch (err) {
      // Sequence numbers taken by a rolled-back transaction are reused.
      for (const e of pending) this.nextSeq.delete(e.agent);
      this.nextMessageSeq.clear();
      throw err;
    }
    for (const e of pending) this.bus.publish(e);
    return result;
  }

  /** Next event sequence per agent, kept in memory: one writer (this process) per database. */
  private readonly nextSeq = new Map<string, number>();
  /** Next message sequence per conversation, likewise. */
  private readonly nextMessageSeq = new Map<string, number>();

  /** Drops an asleep agent's cached sequence numbers; they are reloaded from the store on wake. */
  forget(agentId: string, conversationIds: string[]): void {
    this.nextSeq.delete(agentId);
    for (const c of conversationIds) this.nextMessageSeq.delete(c);
  }

  private async insertEvent(
    tx: Tx,
    agent: AgentRef,
    type: EventType,
    data: Record<string, unknown>,
    options: EmitOptions,
    time: string,
  ): Promise<StoredEvent> {
    let seq = this.nextSeq.get(agent.id);
    if (seq === undefined) {
      const last = await tx.get<{ seq: number | null }>("SELECT MAX(seq) AS seq FROM events WHERE agent_id = ?", [agent.id]);
      seq = (last?.seq ?? 0) + 1;
    }
    this.nextSeq.set(agent.id, seq + 1);
    const row = { seq };
    const id = this.ids.next("event");
    const fullType = EVENT_TYPE_PREFIX + type;
    const source = `/orgs/${agent.org}/agents/${agent.id}`;
    await tx.run("INSERT INTO events (agent_id, seq, id, org, type, time, subject, run, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [
      agent.id,
      row.seq,
      id,
      agent.org,
      fullType,
      time,
      options.subject ?? null,
      options.run ?? null,
      JSON.stringify(data),
    ]);
    return toEvent({
      agent_id: agent.id,
      org: agent.org,
      seq: row.seq,
      id,
      type: fullType,
      time,
      subject: options.subject ?? null,
      run: options.run ?? null,
      source,
      data,
    });
  }

  // ---- tokens ----

  async addToken(org: string, name: string, token: string, admin: boolean): Promise<void> {
    await this.db.transaction((tx) =>
      tx.run("INSERT INTO tokens (id, org, name, hash, admin, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING", [
        this.ids.next("token"),
        org,
        name,
        hashToken(token),
        admin ? 1 : 0,
        this.clock.now().toISOString(),
      ]),
    );
  }

  async authenticate(token: string): Promise<{ org: string; admin: boolean } | undefined> {
    const row = await this.db.get<{ org: string; admin: number }>("SELECT org, admin FROM tokens WHERE hash = ?", [hashToken(token)]);
    return row ? { org: row.org, admin: row.admin === 1 } : undefined;
  }

  // ---- agents ----

  listAgents(org?: string): Promise<AgentRow[]> {
    return org === undefined
      ? this.db.all<AgentRow & Row>("SELECT * FROM agents ORDER BY org, name")
      : this.db.all<AgentRow & Row>("SELECT * FROM agents WHERE org = ? ORDER BY name", [org]);
  }

  getAgent(id: string): Promise<AgentRow | undefined> {
    return this.db.get<AgentRow & Row>("SELECT * FROM agents WHERE id = ?", [id]);
  }

  getAgentByName(org: string, name: string): Promise<AgentRow | undefined> {
    return this.db.get<AgentRow & Row>("SELECT * FROM agents WHERE org = ? AND name = ?", [org, name]);
  }

  async setAgentStatus(w: Writer, agentId: string, status: AgentStatusValue, reason: string | null = null): Promise<void> {
    await w.run("UPDATE agents SET status = ?, reason = ? WHERE id = ?", [status, reason, agentId]);
  }

  // ---- conversations and messages ----

  async conversation(w: Tx, agentId: string, key: string, now: string): Promise<ConversationRow> {
    const found = await w.get<ConversationRow & Row>("SELECT * FROM conversations WHERE agent_id = ? AND key = ?", [agentId, key]);
    if (found) return found;
    const id = this.ids.next("conversation");
    await w.run("INSERT INTO conversations (id, agent_id, key, created_at) VALUES (?, ?, ?, ?)", [id, agentId, key, now]);
    return { id, agent_id: agentId, key, summary: null, summary_upto: 0, created_at: now };
  }

  getConversation(id: string): Promise<ConversationRow | undefined> {
    return this.db.get<ConversationRow & Row>("SELECT * FROM conversations WHERE id = ?", [id]);
  }

  findConversation(agentId: string, key: string): Promise<ConversationRow | undefined> {
    return this.db.get<ConversationRow & Row>("SELECT * FROM conversations WHERE agent_id = ? AND key = ?", [agentId, key]);
  }

  listConversations(agentId: string): Promise<ConversationRow[]> {
    return this.db.all<ConversationRow & Row>("SELECT * FROM conversations WHERE agent_id = ? ORDER BY created_at, key", [agentId]);
  }

  async appendMessage(w: Tx, conversationId: string, run: string | null, message: StoredMessage, now: string): Promise<number> {
    let seq = this.nextMessageSeq.get(conversationId);
    if (seq === undefined) {
      const last = await w.get<{ seq: number | null }>("SELECT MAX(seq) AS seq FROM messages WHERE conversation_id = ?", [conversationId]);
      seq = (last?.seq ?? 0) + 1;
    }
    this.nextMessageSeq.set(conversationId, seq + 1);
    const row = { seq };
    await w.run("INSERT INTO messages (conversation_id, seq, run, role, content, created_at) VALUES (?, ?, ?, ?, ?, ?)", [
      conversationId,
      row.seq,
      run,
      message.role,
      JSON.stringify(message),
      now,
    ]);
    return row.seq;
  }

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

  async historyWithTimes(
    conversationId: string,
    afterSeq = 0,
    limit = 1000,
  ): Promise<{ seq: number; run: string | null; role: string; content: string; created_at: string }[]> {
    return this.db.all(
      "SELECT seq, run, role, content, created_at FROM messages WHERE conversation_id = ? AND seq > ? ORDER BY seq LIMIT ?",
      [conversationId, afterSeq, limit],
    );
  }

  // ---- inputs ----

  queuedInputs(w: Tx, conversationId: string): Promise<{ id: string; text: string }[]> {
    return w.all<{ id: string; text: string }>("SELECT id, text FROM inputs WHERE conversation_id = ? AND status = 'queued' ORDER BY id", [
      conversationId,
    ]);
  }

  /** Conversations of an agent with queued input, for recovery and wake-up. */
  conversationsWithQueuedInput(agentId: string): Promise<{ conversation_id: string }[]> {
    return this.db.all<{ conversation_id: string }>(
      "SELECT DISTINCT conversation_id FROM inputs WHERE agent_id = ? AND status = 'queued'",
      [agentId],
    );
  }

  // ---- turns and calls ----

  getTurn(id: string): Promise<TurnRow | undefined> {
    return this.db.get<TurnRow & Row>("SELECT * FROM turns WHERE id = ?", [id]);
  }

  openTurns(agentId: string): Promise<TurnRow[]> {
    return this.db.all<TurnRow & Row>("SELECT * FROM turns WHERE agent_id = ? AND status IN ('running', 'parked') ORDER BY id", [agentId]);
  }

  openTurnOf(conversationId: string): Promise<TurnRow | undefined> {
    return this.db.get<TurnRow & Row>(
      "SELECT * FROM turns WHERE conversation_id = ? AND status IN ('running', 'parked') ORDER BY id LIMIT 1",
      [conversationId],
    );
  }

  listTurns(conversationId: string, limit = 50): Promise<TurnRow[]> {
    return this.db.all<TurnRow & Row>("SELECT * FROM turns WHERE conversation_id = ? ORDER BY id DESC LIMIT ?", [conversationId, limit]);
  }

  turnInputs(run: string): Promise<{ id: string }[]> {
    return this.db.all<{ id: string }>("SELECT id FROM inputs WHERE run = ? ORDER BY id", [run]);
  }

  async insertCalls(w: Tx, run: string, agentId: string, round: number, calls: NewCall[], now: string): Promise<void> {
    let position = 0;
    for (const c of calls) {
      const running = c.status === "running";
      const final = c.status === "failed" || c.status === "denied";
      await w.run(
        "INSERT INTO calls (id, run, round, position, agent_id, model_call_id, tool, args, status, read_only, idempotent, idempotency_key, decision, reason, rule, result, attempts, started_at, ended_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
          c.id,
          run,
          round,
          position++,
          agentId,
          c.modelCallId,
          c.tool,
          JSON.stringify(c.args ?? {}),
          c.status ?? "planned",
          c.readOnly ? 1 : 0,
          c.idempotent ? 1 : 0,
          c.id,
          c.decision ?? null,
          c.reason ?? null,
          c.rule ?? null,
          c.result === undefined ? null : JSON.stringify(c.result),
          running ? 1 : 0,
          running ? now : null,
          final ? now : null,
        ],
      );
    }
  }

  roundCalls(run: string, round: number): Promise<CallRow[]> {
    return this.db.all<CallRow & Row>("SELECT * FROM calls WHERE run = ? AND round = ? ORDER BY position", [run, round]);
  }

  turnCalls(run: string): Promise<CallRow[]> {
    return this.db.all<CallRow & Row>("SELECT * FROM calls WHERE run = ? ORDER BY round, position", [run]);
  }

  getCall(id: string): Promise<CallRow | undefined> {
    return this.db.get<CallRow & Row>("SELECT * FROM calls WHERE id = ?", [id]);
  }

  waitingCalls(agentId: string): Promise<CallRow[]> {
    return this.db.all<CallRow & Row>("SELECT * FROM calls WHERE agent_id = ? AND status = 'waiting' ORDER BY id", [agentId]);
  }

  // ---- spend ----

  async addSpend(w: Tx, agentId: string, day: string, modelUsd: number, toolsUsd: number): Promise<void> {
    if (modelUsd === 0 && toolsUsd === 0) return;
    await w.run(
      "INSERT INTO spend (agent_id, day, model_usd, tools_usd) VALUES (?, ?, ?, ?) ON CONFLICT (agent_id, day) DO UPDATE SET model_usd = spend.model_usd + excluded.model_usd, tools_usd = spend.tools_usd + excluded.tools_usd",
      [agentId, day, modelUsd, toolsUsd],
    );
  }

  async spendOn(agentId: string, day: string): Promise<SpendToday> {
    const row = await this.db.get<{ model_usd: number; tools_usd: number }>(
      "SELECT model_usd, tools_usd FROM spend WHERE agent_id = ? AND day = ?",
      [agentId, day],
    );
    return row ?? { model_usd: 0, tools_usd: 0 };
  }

  // ---- events ----

  async events(agentId: string, afterSeq: number, limit: number, types?: string[]): Promise<StoredEvent[]> {
    const rows = await this.db.all<EventRow & Row>(
      "SELECT e.*, a.org AS agent_org FROM events e LEFT JOIN agents a ON a.id = e.agent_id WHERE e.agent_id = ? AND e.seq > ? ORDER BY e.seq LIMIT ?",
      [agentId, afterSeq, limit],
    );
    const out = rows.map((r) =>
      toEvent({ ...r, source: `/orgs/${r.org}/agents/${r.agent_id}`, data: JSON.parse(r.data) as Record<string, unknown> }),
    );
    return types ? out.filter((e) => types.includes(e.type) || types.includes(e.type.slice(EVENT_TYPE_PREFIX.length))) : out;
  }

  async lastEventSeq(agentId: string): Promise<number> {
    const row = await this.db.get<{ seq: number | null }>("SELECT MAX(seq) AS seq FROM events WHERE agent_id = ?", [agentId]);
    return row?.seq ?? 0;
  }
}

interface EventRow {
  agent_id: string;
  org: string;
  seq: number;
  id: string;
  type: string;
  time: string;
  subject: string | null;
  run: string | null;
  data: string;
}

function toEvent(r: Omit<EventRow, "data"> & { source: string; data: Record<string, unknown> }): StoredEvent {
  return {
    specversion: "1.0",
    id: r.id,
    source: r.source,
    type: r.type,
    time: r.time,
    ...(r.subject ? { subject: r.subject } : {}),
    datacontenttype: "application/json",
    seq: r.seq,
    ...(r.run ? { run: r.run } : {}),
    data: r.data,
    agent: r.agent_id,
    org: r.org,
  };
}
