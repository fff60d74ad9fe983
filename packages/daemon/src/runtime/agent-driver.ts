import type { AgentDefinition } from "../config/types.js";
import { PromptCache } from "../models/build-prompt.js";
import type { AgentRef, Store } from "../store/store.js";
import type { Reads } from "../store/db.js";
import type { ToolRegistry } from "../tools/tool-registry.js";
import { CallStops } from "./call-stops.js";
import type { EngineOptions } from "./engine-options.js";
import { TurnStop } from "./engine-options.js";
import { CALLERS_SLOT, type TurnSlot } from "./org-turn-slots.js";
import { runConversation } from "./turn-driver.js";
import { KnownConversations } from "./known-conversations.js";
import { TurnProgress } from "./turn-progress.js";
import { TurnStops } from "./turn-stops.js";
import type { RuntimeHooks } from "./types.js";

/** Conversations whose prompts an awake agent keeps in memory at most (see `keepPrompt`). */
export const MAX_CACHED_PROMPTS = 256;
/** Characters of text the prompts an awake agent keeps in memory hold at most, together (see `keepPrompt`). */
export const MAX_CACHED_PROMPT_CHARS = 4 * 1024 * 1024;

interface Runner {
  again: boolean;
  done: Promise<void>;
}

/**
 * One awake agent: what drives its turns in this process. It holds only
 * what can be rebuilt from the store (which is what recovery and waking do):
 * a runner per busy conversation, prompt caches, the abort controllers of
 * running turns and calls, and what it knows of its own open turns.
 */
export class AgentDriver {
  private readonly runners = new Map<string, Runner>();
  private readonly prompts = new Map<string, PromptCache>();
  /** The turns advancing here, to stop them. */
  readonly turnStops = new TurnStops();
  /** The calls running here, and kills that arrived between a call's commit as running and its dispatch. */
  readonly calls = new CallStops();
  /** Per open turn: the model call announced, the round running, the call it runs for. */
  readonly progress = new TurnProgress();
  /** Per conversation: its open turn, a turn being started, messages maybe queued; IDs by key. */
  readonly conversations = new KnownConversations();
  /** Org places taken for turns that a commit started, until the conversation's runner drives them. */
  private readonly startedSlots = new Map<string, TurnSlot>();
  /** Conversations whose next turn waits for a place among the org's running turns. */
  private readonly waitingForSlot = new Set<string>();
  /** Aborts the waits for places when the driver closes. */
  private readonly closing = new AbortController();
  private isClosed = false;
  private lastActiveAt = Date.now();
  /** Plain reads of the store as this agent's org's (they wait for the database in the orgs' rotation). */
  readonly reads: Reads;
  private definition: AgentDefinition;

  constructor(
    readonly id: string,
    readonly org: string,
    def: AgentDefinition,
    readonly store: Store,
    readonly tools: ToolRegistry,
    readonly hooks: RuntimeHooks,
    readonly opts: EngineOptions,
    /** When this node took the agent (at start, or over from another node): calls wait for workers until the grace ends. */
    readonly startedAt: number,
    /** The fencing token of this node's lease on the agent: every write that advances its turns checks it. */
    readonly lease: number,
    /** How the runtime drops this driver: its state turned out unreadable, or a write found its lease taken over by another node. */
    private readonly exits: { unreadable(): void; leaseLost(): void; leaseHeld(): true | Promise<boolean> },
  ) {
    this.ref = { id, org, lease };
    this.reads = store.db.readsFor(org);
    this.definition = def;
  }

  /** The agent's definition as last loaded. */
  get def(): AgentDefinition {
    return this.definition;
  }

  /** The agent's file changed: later steps of its turns use the new definition. */
  redefine(def: AgentDefinition): void {
    this.definition = def;
  }

  /** Closed (shutting down, asleep, dropped or unreadable): it starts and kicks nothing more. */
  get closed(): boolean {
    return this.isClosed;
  }

  /** When a runner last started or ended here (for putting the agent to sleep). */
  get lastActive(): number {
    return this.lastActiveAt;
  }

  /** Whether a turn of the agent waits here for a place among its org's running turns. */
  get waitsForSlot(): boolean {
    return this.waitingForSlot.size > 0;
  }

  /** A commit started the conversation's turn holding `slot`: the runner that drives it takes it over. */
  handOverSlot(conversationId: string, slot: TurnSlot): void {
    this.startedSlots.set(conversationId, slot);
  }

  /** The runtime closed while this driver woke: it starts nothing. */
  refuseWork(): void {
    this.isClosed = true;
  }

  /** A write found the agent's lease taken over by another node: the runtime drops this driver. */
  leaseLost(): void {
    this.exits.leaseLost();
  }

  /** Whether this node still holds the agent's lease, asked before a call leaves for a worker (see Ownership.heldNow). */
  readonly mayStart = (): true | Promise<boolean> => this.exits.leaseHeld();

  readonly ref: AgentRef;

  get busy(): boolean {
    return this.runners.size > 0 || this.calls.size > 0;
  }

  /** How much of the reconnect grace is left (0 once it has passed). */
  graceLeftMs(): number {
    return Math.max(0, this.startedAt + this.opts.reconnectGraceMs - Date.now());
  }

  /** Loads what the store says of the agent's open turns (at wake). */
  async load(): Promise<void> {
    for (const t of await this.store.turns.open(this.id, this.reads)) this.conversations.setOpenTurn(t.conversation_id, t);
  }

  /**
   * Reads the open turns again for every conversation no runner drives here
   * (a runner reads them itself when it loops): another node may have
   * resumed, cancelled or started something.
   */
  async refresh(): Promise<void> {
    const open = await this.store.turns.open(this.id, this.reads);
    this.conversations.refresh(open, (conv) => this.runners.has(conv));
  }

  /** Makes sure a runner works through the conversation's open turn and queued messages. */
  kick(conversationId: string): void {
    if (this.closed) return;
    this.lastActiveAt = Date.now();
    const existing = this.runners.get(conversationId);
    if (existing) {
      existing.again = true;
      return;
    }
    const runner: Runner = { again: true, done: Promise.resolve() };
    runner.done = (async () => {
      try {
        while (runner.again && !this.closed) {
          runner.again = false;
          await runConversation(this, conversationId);
        }
      } catch (err) {
        this.opts.log("error", "conversation runner failed", { agent: this.id, conversation: conversationId, err: String(err) });
      } finally {
        this.runners.delete(conversationId);
        this.lastActiveAt = Date.now();
      }
    })();
    this.runners.set(conversationId, runner);
  }

  /**
   * Whether a message just queued may start its turn in the same commit: the
   * conversation has no open turn, none is being started, and no older
   * message waits to be taken first.
   */
  canStartAt(conversationId: string): boolean {
    return !this.closed && this.conversations.canStartAt(conversationId);
  }

  async prompt(conversationId: string): Promise<PromptCache> {
    let cache = this.prompts.get(conversationId);
    if (cache) {
      // Most recently used last: the first entry is the one to drop when the cache is full.
      this.prompts.delete(conversationId);
      this.prompts.set(conversationId, cache);
      // The prompts grew since the last look (each commit appends to its conversation's).
      this.trimPrompts();
    } else {
      const conv = await this.store.conversations.get(conversationId, this.reads);
      const history = await this.store.conversations.history(conversationId, conv?.summary_upto ?? 0, this.reads);
      cache = new PromptCache(history, conv?.summary ?? null);
      this.keepPrompt(conversationId, cache);
    }
    return cache;
  }

  /** A conversation just created has no history: its prompt starts empty without reading the store. */
  primeEmptyPrompt(conversationId: string): void {
    if (!this.prompts.has(conversationId)) this.keepPrompt(conversationId, new PromptCache([], null));
  }

  /**
   * Caches a conversation's prompt. The prompts an agent keeps are bounded by
   * their text (MAX_CACHED_PROMPT_CHARS, which is what their memory grows
   * with) and by their number (MAX_CACHED_PROMPTS): the least recently used
   * go first. An agent talking in thousands of threads, or in a few very long
   * ones, would otherwise hold every history in memory for as long as it is
   * awake, and the garbage collector would walk all of it. A dropped prompt
   * is read from the store again when its conversation next has a turn: that
   * costs the whole history's rows, so the bound is not a small count of
   * conversations (fifty clients each in a conversation of its own with one
   * agent read their whole histories every turn under a bound of 32).
   */
  private keepPrompt(conversationId: string, cache: PromptCache): void {
    this.prompts.set(conversationId, cache);
    this.trimPrompts();
  }

  /** Drops the least recently used prompts while they hold more than the bounds allow; the latest always stays. */
  private trimPrompts(): void {
    let chars = 0;
    for (const p of this.prompts.values()) chars += p.chars;
    for (const [id, p] of this.prompts) {
      if (this.prompts.size <= 1 || (this.prompts.size <= MAX_CACHED_PROMPTS && chars <= MAX_CACHED_PROMPT_CHARS)) break;
      this.prompts.delete(id);
      chars -= p.chars;
    }
  }

  /** The prompt cache of a conversation if one is loaded (to append what was just committed). */
  cachedPrompt(conversationId: string): PromptCache | undefined {
    return this.prompts.get(conversationId);
  }

  /** Drops cached prompts (history cleared, compaction, sleep). */
  forgetPrompt(conversationId?: string): void {
    if (conversationId) this.prompts.delete(conversationId);
    else this.prompts.clear();
  }

  /** Conversations this driver has touched (for dropping per-conversation caches when it sleeps). */
  conversationIds(): string[] {
    return [...new Set([...this.prompts.keys(), ...this.runners.keys()])];
  }

  /**
   * The org place for driving the conversation's next turn: the one its
   * starting commit took, or one waited for (the conversation shows as
   * waiting meanwhile). Undefined when the driver closed while it waited.
   * `child`: the open turn is a child turn, which runs in its caller's place.
   */
  async turnSlot(conversationId: string, child = false): Promise<TurnSlot | undefined> {
    const started = this.startedSlots.get(conversationId);
    if (started) {
      this.startedSlots.delete(conversationId);
      return started;
    }
    if (child) return CALLERS_SLOT;
    const now = this.opts.turnSlots.tryTake(this.org);
    if (now) return now;
    this.waitingForSlot.add(conversationId);
    try {
      return await this.opts.turnSlots.take(this.org, this.closing.signal);
    } catch {
      return undefined;
    } finally {
      this.waitingForSlot.delete(conversationId);
    }
  }

  /** The driver stops: its waits for places end, and places no runner took yet are given back. */
  private giveUpSlots(reason: unknown): void {
    this.closing.abort(reason);
    for (const s of this.startedSlots.values()) s.release();
    this.startedSlots.clear();
  }

  async close(reason: TurnStop = new TurnStop("shutdown")): Promise<void> {
    this.isClosed = true;
    this.giveUpSlots(reason);
    this.turnStops.stopAll(reason);
    await Promise.allSettled([...this.runners.values()].map((r) => r.done));
  }

  /** Saved state this version cannot use: the agent stops, says why, and the others go on. */
  async markUnreadable(reason: string): Promise<void> {
    this.isClosed = true;
    this.giveUpSlots(new Error(reason));
    this.opts.log("error", "agent state is unreadable", { agent: this.id, reason });
    await this.store.tx(async (w) => {
      await this.store.agents.markUnreadable(w, this.id, reason);
      w.emit(this.ref, "agent.unreadable", { reason });
    }, this.org);
    this.exits.unreadable();
  }
}
