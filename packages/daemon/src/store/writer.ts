import { EVENT_TYPE_PREFIX, type EventDataMap, type EventType } from "@wardrik/protocol";
import type { StoredEvent } from "../events/event-bus.js";
import { keepDataJson } from "../events/event-json.js";
import type { IdGenerator } from "../ids.js";
import type { Row, SqlValue, Tx } from "./db.js";
import type { StoredMessage } from "./message-format.js";
import { LARGE_TEXT_CHARS, storedByReference, type TextEvent } from "./message-text.js";
import { dataJson, valueJson } from "./json-once.js";

export interface AgentRef {
  id: string;
  org: string;
  /**
   * The fencing token of this node's lease on the agent. Set for writes that
   * advance the agent's turns (its owner's); absent for writes any node may
   * make (a message, a decision), which its owner then picks up.
   */
  lease?: number | undefined;
}

export interface EmitOptions {
  run?: string | undefined;
  subject?: string | undefined;
}

/** A message appended in a transaction; its sequence number is known once the transaction has flushed. */
export interface PendingMessage {
  conversationId: string;
  run: string | null;
  message: StoredMessage;
  seq: number;
  /** A user message's message.queued event, which holds its text when it is large: the row names it instead (message-text.ts). */
  textIn?: TextEvent | undefined;
  /** Redaction changed nothing in the message: its tool outputs are what their calls stored. */
  asGiven?: boolean;
}

/**
 * A transaction that also records events and messages. Both get their
 * sequence numbers from the agent's row when the transaction ends (one
 * UPDATE per agent, then one multi-row INSERT per table), so numbers come
 * from the database, never from a process, and a transaction costs few
 * statements however many events it writes.
 */
export interface Writer extends Tx {
  readonly now: string;
  emit<T extends EventType>(agent: AgentRef, type: T, data: EventDataMap[T], options?: EmitOptions): StoredEvent;
  /** `textIn`: for a user message, its message.queued event (of the same agent), which keeps a large text instead of the row. */
  appendMessage(agent: AgentRef, conversationId: string, run: string | null, message: StoredMessage, textIn?: TextEvent): PendingMessage;
  /** Changes the agent's open-turn counters (which give its running/parked status). */
  countTurns(agent: AgentRef, delta: { running?: number; parked?: number }): void;
  /** Runs after the flush, inside the transaction (a delete of the agent row itself). */
  afterFlush(fn: (tx: Tx) => Promise<void>): void;
  /** Runs once the transaction has committed (caches, wake-ups); never after a rollback. */
  afterCommit(fn: () => void): void;
}

/** The agent a write was for no longer exists (removed while the write was prepared). */
export class AgentGoneError extends Error {}

/** The agent is no longer this node's: another node holds its lease now, so nothing of this write stands. */
export class LeaseLostError extends AgentGoneError {}

interface AgentWrites {
  ref: AgentRef;
  events: { event: StoredEvent; json: string }[];
  messages: PendingMessage[];
  running: number;
  parked: number;
}

const MAX_ROWS_PER_INSERT = 500;
const UPDATE_AGENT_BASE =
  "UPDATE agents SET event_seq = event_seq + ?, message_seq = message_seq + ?, running_turns = running_turns + ?, parked_turns = parked_turns + ?";
const UPDATE_AGENT = `${UPDATE_AGENT_BASE} WHERE id = ? RETURNING event_seq, message_seq`;
const UPDATE_AGENT_FENCED = `${UPDATE_AGENT_BASE} WHERE id = ? AND lease_token = ? RETURNING event_seq, message_seq`;

export class BufferedWriter implements Writer {
  private readonly agents = new Map<string, AgentWrites>();
  private readonly flushed: ((tx: Tx) => Promise<void>)[] = [];
  readonly committed: (() => void)[] = [];
  readonly events: StoredEvent[] = [];

  constructor(
    private readonly tx: Tx,
    readonly now: string,
    private readonly ids: IdGenerator,
    private readonly redact: (data: unknown, org: string) => unknown,
    private readonly onEventsWritten?: (tx: Tx, events: readonly StoredEvent[]) => Promise<void>,
  ) {}

  run(sql: string, params?: readonly SqlValue[]): Promise<{ changes: number }> {
    return this.tx.run(sql, params);
  }
  get<R extends Row = Row>(sql: string, params?: readonly SqlValue[]): Promise<R | undefined> {
    return this.tx.get<R>(sql, params);
  }
  all<R extends Row = Row>(sql: string, params?: readonly SqlValue[]): Promise<R[]> {
    return this.tx.all<R>(sql, params);
  }

  private writesOf(agent: AgentRef): AgentWrites {
    let w = this.agents.get(agent.id);
    if (!w) {
      w = { ref: agent, events: [], messages: [], running: 0, parked: 0 };
      this.agents.set(agent.id, w);
    } else if (w.ref.lease === undefined && agent.lease !== undefined) {
      // One write for the agent under its lease fences the whole transaction.
      w.ref = agent;
    }
    return w;
  }

  emit<T extends EventType>(agent: AgentRef, type: T, data: EventDataMap[T], options: EmitOptions = {}): StoredEvent {
    const clean = this.redact(data, agent.org) as Record<string, unknown>;
    const event: StoredEvent = {
      specversion: "1.0",
      id: this.ids.next("event"),
      source: `/orgs/${agent.org}/agents/${agent.id}`,
      type: EVENT_TYPE_PREFIX + type,
      time: this.now,
      ...(options.subject ? { subject: options.subject } : {}),
      datacontenttype: "application/json",
      seq: 0,
      ...(options.run ? { run: options.run } : {}),
      data: clean,
      agent: agent.id,
      org: agent.org,
    };
    const json = dataJson(clean);
    keepDataJson(event, json);
    this.writesOf(agent).events.push({ event, json });
    this.events.push(event);
    return event;
  }

  appendMessage(agent: AgentRef, conversationId: string, run: string | null, message: StoredMessage, textIn?: TextEvent): PendingMessage {
    // Redacted now, not at the flush: what callers keep of it (the prompt cache) is what the row holds.
    const redacted = this.redact(message, agent.org) as StoredMessage;
    const pending: PendingMessage = { conversationId, run, message: redacted, seq: 0, textIn, asGiven: redacted === message };
    this.writesOf(agent).messages.push(pending);
    return pending;
  }

  countTurns(agent: AgentRef, delta: { running?: number; parked?: number }): void {
    const w = this.writesOf(agent);
    w.running += delta.running ?? 0;
    w.parked += delta.parked ?? 0;
  }

  afterFlush(fn: (tx: Tx) => Promise<void>): void {
    this.flushed.push(fn);
  }

  afterCommit(fn: () => void): void {
    this.committed.push(fn);
  }

  /** Allocates sequence numbers and writes the buffered rows; the last step of every transaction. */
  async flush(): Promise<void> {
    // A fixed order of agent rows keeps two transactions from locking them in opposite orders.
    const writes = [...this.agents.values()];
    if (writes.length > 1) writes.sort((a, b) => (a.ref.id < b.ref.id ? -1 : a.ref.id > b.ref.id ? 1 : 0));
    for (const w of writes) {
      const lease = w.ref.lease;
      const row = await this.tx.get<{ event_seq: number; message_seq: number }>(
        lease === undefined ? UPDATE_AGENT : UPDATE_AGENT_FENCED,
        lease === undefined
          ? [w.events.length, w.messages.length, w.running, w.parked, w.ref.id]
          : [w.events.length, w.messages.length, w.running, w.parked, w.ref.id, lease],
      );
      if (!row && lease !== undefined)
        throw new LeaseLostError(`Agent ${w.ref.id} is no longer this node's (its lease ${lease} was taken over).`);
      if (!row) throw new AgentGoneError(`Agent ${w.ref.id} no longer exists.`);
      let eventSeq = row.event_seq - w.events.length;
      for (const e of w.events) e.event.seq = ++eventSeq;
      let messageSeq = row.message_seq - w.messages.length;
      for (const m of w.messages) m.seq = ++messageSeq;
    }
    const events = writes.length === 1 ? writes[0]!.events : writes.flatMap((w) => w.events);
    if (events.length > 0) await this.insertEvents(events);
    // Whatever must be durable with the events (the webhook outbox) joins this same commit.
    if (this.onEventsWritten && events.length > 0) await this.onEventsWritten(this.tx, this.events);
    const messages = writes.length === 1 ? writes[0]!.messages : writes.flatMap((w) => w.messages);
    if (messages.length > 0) await this.insertMessages(messages);
    for (const fn of this.flushed) await fn(this.tx);
  }

  private async insertEvents(rows: { event: StoredEvent; json: string }[]): Promise<void> {
    for (let i = 0; i < rows.length; i += MAX_ROWS_PER_INSERT) {
      const chunk = rows.slice(i, i + MAX_ROWS_PER_INSERT);
      const params: SqlValue[] = [];
      for (const { event: e, json } of chunk) {
        params.push(e.agent, e.seq, e.id, e.org, e.type, e.time, e.subject ?? null, e.run ?? null, json);
      }
      await this.tx.run(
        multiRowInsert("INSERT INTO events (agent_id, seq, id, org, type, time, subject, run, data) VALUES ", chunk.length, 9),
        params,
      );
    }
  }

  private async insertMessages(rows: PendingMessage[]): Promise<void> {
    for (let i = 0; i < rows.length; i += MAX_ROWS_PER_INSERT) {
      const chunk = rows.slice(i, i + MAX_ROWS_PER_INSERT);
      const params: SqlValue[] = [];
      for (const m of chunk) {
        params.push(m.conversationId, m.seq, m.run, m.message.role, contentJson(m), this.now);
      }
      await this.tx.run(
        multiRowInsert("INSERT INTO messages (conversation_id, seq, run, role, content, created_at) VALUES ", chunk.length, 6),
        params,
      );
    }
  }
}

/**
 * A history row's content: the message, with what another row already holds
 * named instead of copied (message-text.ts): a large user text by its
 * message.queued event, a large successful tool output by its call (whose
 * `result` holds the same JSON: the round's results are its calls' results).
 */
function contentJson(m: PendingMessage): string {
  const message = m.message;
  if (message.role === "user" && storedByReference(message.text, m.textIn))
    return JSON.stringify({ role: "user", text: "", input: message.input, textSeq: m.textIn.seq });
  // Blanked by redaction here, its outputs are not what their calls stored: the row keeps its own copy.
  if (message.role !== "tool" || !m.asGiven) return JSON.stringify(message);
  const parts = message.results.map((r) => {
    if (r.isError) return JSON.stringify(r);
    // Serialised once: a large output only to learn its size, then left to its call's row.
    const output = valueJson(r.output);
    if (output.length < LARGE_TEXT_CHARS) return JSON.stringify(r);
    return JSON.stringify({ modelCallId: r.modelCallId, callId: r.callId, tool: r.tool, isError: false, outputInCall: true });
  });
  return `{"role":"tool","results":[${parts.join(",")}]}`;
}

const placeholderCache = new Map<number, string>();
const insertCache = new Map<string, string[]>();

/**
 * `head` followed by the placeholders of `rows` rows, built once per shape: every turn writes the same
 * few shapes, and a new string each time would be hashed again by the statement cache.
 */
export function multiRowInsert(head: string, rows: number, columns: number): string {
  if (rows > 64) return head + placeholderText(rows, columns);
  let byRows = insertCache.get(head);
  if (!byRows) insertCache.set(head, (byRows = []));
  return (byRows[rows] ??= head + placeholders(rows, columns));
}

/** `(?, ?, ?), (?, ?, ?)` for a multi-row INSERT (the same string object each time: the statement cache is keyed by it). */
export function placeholders(rows: number, columns: number): string {
  const key = rows * 1024 + columns;
  let text = placeholderCache.get(key);
  if (text === undefined) {
    text = placeholderText(rows, columns);
    if (rows <= 64) placeholderCache.set(key, text);
  }
  return text;
}

function placeholderText(rows: number, columns: number): string {
  const one = `(${Array.from({ length: columns }, () => "?").join(", ")})`;
  return Array.from({ length: rows }, () => one).join(", ");
}
