import type { TurnRow } from "../store/rows.js";

/** What a driver knows of a conversation's open turn: the row, "unknown" (read it again), or none (absent). */
export type KnownTurn = TurnRow | "unknown";

/**
 * What an awake agent knows of its conversations, as far as this process
 * saw: the open turn of each, which ones a commit is starting a turn in,
 * which may have queued messages no turn took, and their IDs by key. Owned
 * by the agent's driver; the turn driver, enqueue and the control paths
 * change it through these methods, mostly once a commit is durable.
 */
export class KnownConversations {
  private readonly openTurns = new Map<string, KnownTurn>();
  private readonly starting = new Set<string>();
  private readonly queued = new Set<string>();
  private readonly ids = new Map<string, string>();

  // ---- open turns ----

  openTurn(conversationId: string): KnownTurn | undefined {
    return this.openTurns.get(conversationId);
  }

  hasOpenTurn(conversationId: string): boolean {
    return this.openTurns.has(conversationId);
  }

  setOpenTurn(conversationId: string, turn: TurnRow): void {
    this.openTurns.set(conversationId, turn);
  }

  /** Something changed the conversation's open turn elsewhere: the next look reads it from the store. */
  markUnknown(conversationId: string): void {
    this.openTurns.set(conversationId, "unknown");
  }

  /** The conversation has no open turn (as read from the store). */
  noOpenTurn(conversationId: string): void {
    this.openTurns.delete(conversationId);
  }

  /** The turn ended: the conversation has no open turn, unless a newer one is known. */
  turnEnded(turn: Pick<TurnRow, "id" | "conversation_id">): void {
    const known = this.openTurns.get(turn.conversation_id);
    if (known === "unknown" || known?.id === turn.id) this.openTurns.delete(turn.conversation_id);
  }

  /**
   * Takes the store's open turns in, for every conversation `isDriven` says
   * no runner drives (a runner reads them itself when it loops); the others
   * known without an open turn are forgotten.
   */
  refresh(open: TurnRow[], isDriven: (conversationId: string) => boolean): void {
    for (const conv of [...this.openTurns.keys()]) if (!isDriven(conv)) this.openTurns.delete(conv);
    for (const t of open) if (!isDriven(t.conversation_id)) this.openTurns.set(t.conversation_id, t);
  }

  /** Conversations whose known open turn is running. */
  withRunningTurn(): string[] {
    return [...this.openTurns].filter(([, t]) => t !== "unknown" && t.status === "running").map(([conv]) => conv);
  }

  // ---- turns being started, messages queued ----

  /** Whether a commit is starting a turn in the conversation right now (it kicks the runner once durable). */
  isStarting(conversationId: string): boolean {
    return this.starting.has(conversationId);
  }

  startingTurn(conversationId: string): void {
    this.starting.add(conversationId);
  }

  /** The start committed (the turn is open) or was rolled back. */
  notStarting(conversationId: string): void {
    this.starting.delete(conversationId);
  }

  /** Whether the conversation may have queued messages no turn has taken. */
  mayHaveQueued(conversationId: string): boolean {
    return this.queued.has(conversationId);
  }

  /** A message may be queued behind an open turn. */
  markQueued(conversationId: string): void {
    this.queued.add(conversationId);
  }

  /** A look for queued messages is under way: what it does not take is marked again. */
  clearQueued(conversationId: string): void {
    this.queued.delete(conversationId);
  }

  /**
   * Whether a message just queued may start its turn in the same commit: the
   * conversation has no open turn, none is being started, and no older
   * message waits to be taken first.
   */
  canStartAt(conversationId: string): boolean {
    return !this.openTurns.has(conversationId) && !this.starting.has(conversationId) && !this.queued.has(conversationId);
  }

  // ---- keys ----

  idOf(key: string): string | undefined {
    return this.ids.get(key);
  }

  keyOf(conversationId: string): string | undefined {
    for (const [key, id] of this.ids) if (id === conversationId) return key;
    return undefined;
  }

  rememberKey(key: string, conversationId: string): void {
    this.ids.set(key, conversationId);
  }
}
