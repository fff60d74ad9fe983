import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentDefinition } from "../config/types.js";
import { EventBus, type StoredEvent } from "../events/event-bus.js";
import { ulidIds, type Clock } from "../ids.js";
import type { Logger } from "../log/logger.js";
import type { HistoryAt } from "../runtime/conversation-at.js";
import { appendHistory } from "../runtime/fork-conversation.js";
import { Runtime } from "../runtime/runtime.js";
import type { RuntimeHooks } from "../runtime/types.js";
import { SqliteDb } from "../store/sqlite-db.js";
import { dayOf, type SpendToday } from "../store/spend.js";
import { Store, type AgentRow } from "../store/store.js";
import type { ToolRegistry } from "../tools/tool-registry.js";

export interface ScratchAgentOptions {
  /** The real agent: the copy keeps its ID and org, so a live tool sees the same agent. */
  agent: Pick<AgentRow, "id" | "org" | "name">;
  /** The definition the copy runs with (the agent's, or the one a replay was given). */
  definition: AgentDefinition;
  conversation: string;
  /** The conversation's history before the first replayed turn. */
  history: Pick<HistoryAt, "entries" | "summary">;
  /** What the agent spent today: the copy starts from it, so a daily budget counts as it would have. */
  spentToday: SpendToday;
  hooks: RuntimeHooks;
  /** The replay's tools (answered from the record), never the daemon's own registry. */
  tools: ToolRegistry;
  toolTimeoutMs: number;
  clock: Clock;
  log: Logger;
  redact?: (data: unknown, org: string) => unknown;
}

/**
 * A copy of one agent and one conversation in a temporary SQLite database,
 * driven by a Runtime of its own: the real turn loop, policies and budgets,
 * with nothing shared with the daemon's record. Its events go to its own
 * bus (no follower, webhook or console sees them); its tools are whatever
 * registry it is given. `close()` deletes the database.
 */
export class ScratchAgent {
  readonly events: StoredEvent[] = [];
  private readonly listeners = new Set<(e: StoredEvent) => void>();

  private constructor(
    private readonly dir: string,
    private readonly db: SqliteDb,
    readonly store: Store,
    readonly runtime: Runtime,
    readonly row: AgentRow,
    readonly conversationId: string,
    readonly conversation: string,
    bus: EventBus,
  ) {
    bus.subscribe("*", (e) => {
      this.events.push(e);
      for (const l of [...this.listeners]) l(e);
    });
  }

  static async open(o: ScratchAgentOptions): Promise<ScratchAgent> {
    const dir = mkdtempSync(join(tmpdir(), "wardrik-replay-"));
    let db: SqliteDb | undefined;
    try {
      // A scratch file: no background checkpoints, nothing worth an fsync.
      db = new SqliteDb(join(dir, "scratch.db"), { checkpointInBackground: false });
      const bus = new EventBus();
      const store = new Store(db, bus, ulidIds(o.clock), o.clock, o.redact ? { redact: o.redact } : {});
      const runtime = new Runtime(store, o.tools, o.hooks, { toolTimeoutMs: o.toolTimeoutMs, reconnectGraceMs: 0, log: o.log });
      const ref = { id: o.agent.id, org: o.agent.org };
      const conversationId = await store.tx(async (w) => {
        const definition = JSON.stringify(o.definition);
        await store.agents.insert(w, { ...ref, name: o.agent.name, source: "api", definition, file: null, status: "idle", reason: null });
        const conv = await store.conversations.ensure(w, o.agent.id, o.conversation, w.now);
        appendHistory(w, store, ref, conv.id, o.history);
        await store.spend.add(w, o.agent.id, dayOf(o.clock.now()), o.spentToday.model_micros, o.spentToday.tools_micros);
        return conv.id;
      });
      const row = (await store.agents.get(o.agent.id))!;
      return new ScratchAgent(dir, db, store, runtime, row, conversationId, o.conversation, bus);
    } catch (err) {
      await db?.close();
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** Calls `fn` with every event the copy records from now on; returns a function that stops it. */
  onEvent(fn: (e: StoredEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Queues `texts` as one turn's messages and starts it; resolves with the message IDs. */
  async queue(texts: readonly string[]): Promise<string[]> {
    const ids = texts.map(() => this.store.ids.next("message"));
    await this.store.tx(async (w) => {
      for (const [i, text] of texts.entries()) {
        await this.store.inputs.insert(w, { id: ids[i]!, agentId: this.row.id, conversationId: this.conversationId, text }, w.now);
      }
    });
    // One look for queued messages takes them all: the turn starts with every message, as the recorded one did.
    await this.runtime.resume(this.row.id);
    return ids;
  }

  async close(): Promise<void> {
    await this.runtime.close();
    await this.db.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
