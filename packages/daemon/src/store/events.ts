import { EVENT_TYPE_PREFIX, shortType } from "@wardrik/protocol";
import type { StoredEvent } from "../events/event-bus.js";
import { keepDataJson } from "../events/event-json.js";
import type { Db, Row, SqlValue } from "./db.js";
import type { SqlDialect } from "./dialect.js";

export interface EventRow {
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

export interface EventFilter {
  /** Patterns: `turn.completed`, `dev.wardrik.turn.completed`, `call.*`, `*`. */
  types?: readonly string[] | undefined;
  /** One turn's events only. */
  run?: string | undefined;
  /** Events whose data holds this text (see textClause). */
  text?: string | undefined;
  /**
   * The events of this conversation's turns (its key) and those of no turn: a superset of the conversation's
   * events that its stream narrows further (the messages queued and dropped say their conversation in their data).
   */
  conversation?: string | undefined;
}

/** The IDs of an agent's turns in the conversation with a key; parameters: the agent's ID, the key. */
const TURNS_OF_CONVERSATION =
  "SELECT t.id FROM turns t JOIN conversations c ON c.id = t.conversation_id WHERE c.agent_id = ? AND c.key = ?";

/** Reads of one agent's ordered log; every filter applies in SQL, before the limit. Committed events only (Db.committed). */
export class EventsTable {
  private readonly db: Db["committed"];
  private readonly dialect: Db["dialect"];

  constructor(db: Db) {
    this.db = db.committed;
    this.dialect = db.dialect;
  }

  async list(agentId: string, afterSeq: number, limit: number, filter: EventFilter = {}): Promise<StoredEvent[]> {
    const types = typeClause(filter.types);
    const run = filter.run === undefined ? "" : " AND run = ?";
    const text = filter.text === undefined ? undefined : textClause(this.dialect, filter.text);
    const conversation = filter.conversation === undefined ? "" : ` AND (run IS NULL OR run IN (${TURNS_OF_CONVERSATION}))`;
    const rows = await this.db.all<EventRow & Row>(
      `SELECT * FROM events WHERE agent_id = ? AND seq > ?${types.sql}${run}${text?.sql ?? ""}${conversation} ORDER BY seq LIMIT ?`,
      [
        agentId,
        afterSeq,
        ...types.params,
        ...(filter.run === undefined ? [] : [filter.run]),
        ...(text?.params ?? []),
        ...(filter.conversation === undefined ? [] : [agentId, filter.conversation]),
        limit,
      ],
    );
    return rows.map(toEvent);
  }

  /** The turns of a conversation (by its key) that are running or parked: their events are still to come. */
  async openRunsOf(agentId: string, conversation: string): Promise<string[]> {
    const rows = await this.db.all<{ id: string }>(`${TURNS_OF_CONVERSATION} AND t.status IN ('running', 'parked')`, [
      agentId,
      conversation,
    ]);
    return rows.map((r) => r.id);
  }

  /** When the agent's latest event happened (its last activity); undefined before its first. */
  async lastTime(agentId: string): Promise<string | undefined> {
    const row = await this.db.get<{ time: string }>("SELECT time FROM events WHERE agent_id = ? ORDER BY seq DESC LIMIT 1", [agentId]);
    return row?.time;
  }

  async lastSeq(agentId: string): Promise<number> {
    const row = await this.db.get<{ seq: number | null }>("SELECT MAX(seq) AS seq FROM events WHERE agent_id = ?", [agentId]);
    return row?.seq ?? 0;
  }
}

/** ` AND (...)` matching any of the type patterns; empty when every type passes. */
export function typeClause(types: readonly string[] | undefined, column = "type"): { sql: string; params: SqlValue[] } {
  if (!types || types.length === 0) return { sql: "", params: [] };
  const parts: string[] = [];
  const params: SqlValue[] = [];
  for (const raw of types) {
    const short = shortType(raw.trim());
    if (short === "*" || short === "") return { sql: "", params: [] };
    if (short.endsWith(".*")) {
      const prefix = EVENT_TYPE_PREFIX + short.slice(0, -1);
      parts.push(`substr(${column}, 1, ?) = ?`);
      params.push(prefix.length, prefix);
    } else {
      parts.push(`${column} = ?`);
      params.push(EVENT_TYPE_PREFIX + short);
    }
  }
  return { sql: ` AND (${parts.join(" OR ")})`, params };
}

/**
 * ` AND data ...` matching events whose data holds `text`. The data is stored
 * as JSON, so the text is searched for as JSON writes it (a quote as \"). The
 * case of ASCII letters is ignored; PostgreSQL's ILIKE also ignores that of
 * other letters, SQLite's LIKE does not.
 */
export function textClause(dialect: Pick<SqlDialect, "caseInsensitiveLike">, text: string): { sql: string; params: SqlValue[] } {
  const json = JSON.stringify(text).slice(1, -1);
  const pattern = `%${json.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return { sql: ` AND data ${dialect.caseInsensitiveLike} ? ESCAPE '\\'`, params: [pattern] };
}

export function toEvent(r: EventRow): StoredEvent {
  const event: StoredEvent = {
    specversion: "1.0",
    id: r.id,
    source: `/orgs/${r.org}/agents/${r.agent_id}`,
    type: r.type,
    time: r.time,
    ...(r.subject ? { subject: r.subject } : {}),
    datacontenttype: "application/json",
    seq: r.seq,
    ...(r.run ? { run: r.run } : {}),
    data: JSON.parse(r.data) as Record<string, unknown>,
    agent: r.agent_id,
    org: r.org,
  };
  // A stream sending it builds its frame from the stored text instead of serialising the data again.
  keepDataJson(event, r.data);
  return event;
}
