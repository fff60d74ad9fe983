import type { EventBus } from "../events/event-bus.js";
import type { Clock, IdGenerator } from "../ids.js";
import { AgentsTable } from "./agents.js";
import { CallsTable } from "./calls.js";
import { ConsoleLinksTable } from "./console-links.js";
import { ConversationsTable } from "./conversations.js";
import { ConversationRecord } from "./conversation-record.js";
import type { Db, Tx } from "./db.js";
import type { StoredEvent } from "../events/event-bus.js";
import { EventsTable } from "./events.js";
import { FilesTable } from "./files.js";
import { InputsTable } from "./inputs.js";
import { LeasesTable } from "./leases.js";
import { NodesTable } from "./nodes.js";
import { IDLE_IN_TRANSACTION_ENDED } from "./postgres-db.js";
import { SlackTable } from "./slack.js";
import { SpendTable } from "./spend.js";
import { TokensTable } from "./tokens.js";
import { TurnsTable } from "./turns.js";
import { BufferedWriter, type Writer } from "./writer.js";

export interface StoreOptions {
  /** Applied to every event's data, stored message and turn reply of `org` before it is written (removes that org's secret values). */
  redact?: (data: unknown, org: string) => unknown;
  /**
   * Runs inside every transaction that wrote events, after they are written
   * (with their sequence numbers): what must be durable together with its
   * events, such as the webhook outbox, is written here.
   */
  onEventsWritten?: (tx: Tx, events: readonly StoredEvent[]) => Promise<void>;
  /** Told how long each committed transaction took, in seconds (the commit-time metric). */
  onCommit?: (seconds: number) => void;
}

/**
 * PostgreSQL's codes for a transaction that may simply be run again: it lost
 * a race, or its session was ended while it sat idle (its process was frozen;
 * see PostgresOptions.idleInTransactionMs), so nothing of it committed.
 */
const RETRYABLE_SQLSTATES = new Set(["40001", "40P01", IDLE_IN_TRANSACTION_ENDED]);
const MAX_TX_ATTEMPTS = 5;

/**
 * The durable state, as named commands per table (`store.calls.finish(w, ...)`)
 * and one way to write: `tx()`, where every state change commits together
 * with the events that describe it, and those events reach followers only
 * after the commit. All SQL of the daemon lives in this folder.
 */
export class Store {
  readonly agents: AgentsTable;
  readonly conversations: ConversationsTable;
  /** Where a conversation's turns, clears and compactions sit in the event log (fork, replay). */
  readonly record: ConversationRecord;
  readonly inputs: InputsTable;
  readonly turns: TurnsTable;
  readonly calls: CallsTable;
  readonly spend: SpendTable;
  readonly events: EventsTable;
  readonly files: FilesTable;
  readonly tokens: TokensTable;
  readonly leases: LeasesTable;
  readonly nodes: NodesTable;
  readonly slack: SlackTable;
  readonly consoleLinks: ConsoleLinksTable;
  private readonly redact: (data: unknown, org: string) => unknown;
  private readonly onEventsWritten: StoreOptions["onEventsWritten"];
  private readonly onCommit: ((seconds: number) => void) | undefined;

  constructor(
    readonly db: Db,
    private readonly bus: EventBus,
    readonly ids: IdGenerator,
    readonly clock: Clock,
    options: StoreOptions = {},
  ) {
    this.agents = new AgentsTable(db);
    this.conversations = new ConversationsTable(db, ids);
    this.record = new ConversationRecord(db);
    this.inputs = new InputsTable(db);
    this.redact = options.redact ?? ((d) => d);
    this.turns = new TurnsTable(db, this.redact);
    this.calls = new CallsTable(db);
    this.spend = new SpendTable(db);
    this.events = new EventsTable(db);
    this.files = new FilesTable();
    this.tokens = new TokensTable(db, ids);
    this.leases = new LeasesTable(db);
    this.nodes = new NodesTable(db);
    this.slack = new SlackTable(db);
    this.consoleLinks = new ConsoleLinksTable(db);
    this.onEventsWritten = options.onEventsWritten;
    this.onCommit = options.onCommit;
  }

  /**
   * Runs `fn` in one transaction. `fn` may run more than once (PostgreSQL
   * retries a transaction that lost a race), so it keeps its effects in the
   * database and registers anything else with `w.afterCommit`. `org`: whose
   * work it is, so that another org's backlog of transactions does not
   * stand ahead of it for a connection (Db.transaction).
   */
  async tx<T>(fn: (w: Writer) => Promise<T>, org?: string): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const now = this.clock.now().toISOString();
      let writer: BufferedWriter | undefined;
      const started = this.onCommit ? performance.now() : 0;
      try {
        const result = await this.db.transaction(async (tx) => {
          writer = new BufferedWriter(tx, now, this.ids, this.redact, this.onEventsWritten);
          const value = await fn(writer);
          await writer.flush();
          return value;
        }, org);
        this.onCommit?.((performance.now() - started) / 1000);
        for (const e of writer!.events) this.bus.publish(e);
        for (const f of writer!.committed) f();
        return result;
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        if (attempt >= MAX_TX_ATTEMPTS || typeof code !== "string" || !RETRYABLE_SQLSTATES.has(code)) throw err;
      }
    }
  }
}

export type { Writer, AgentRef, EmitOptions, PendingMessage } from "./writer.js";
export { AgentGoneError, LeaseLostError } from "./writer.js";
export { STATE_FORMAT, StateError, parseStored } from "./state-error.js";
export type { NewCall } from "./calls.js";
export type { HistoryMark, TurnMark } from "./conversation-record.js";
export * from "./rows.js";
