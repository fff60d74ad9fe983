/** A message about one call (its result, or a cost report), as the text the daemon will read. */
export interface CallFrame {
  readonly callId: string;
  readonly frame: string;
}

/** How much an outbox keeps while no daemon is connected. */
export interface OutboxLimits {
  /** Messages kept at most; past it the oldest go first. Default 1,000. */
  maxMessages?: number;
  /** A message older than this is dropped: the daemon has long given up on the call. Default 15 minutes. */
  maxAgeMs?: number;
  /** Characters kept at most, over all messages. Default 64 Mi. */
  maxChars?: number;
}

interface Held extends CallFrame {
  readonly at: number;
}

export const OUTBOX_DEFAULTS = { maxMessages: 1000, maxAgeMs: 15 * 60_000, maxChars: 64 * 1024 * 1024 } as const;

/**
 * Results and cost reports of calls that finished while the worker had no
 * connection. They go to the next daemon that welcomes the worker (the same
 * one or its successor), which still knows the call by its ID and attempt.
 * Bounded in count, age and size so a worker cut off for long cannot grow
 * without limit; whatever is dropped is reported through `warn`.
 */
export class Outbox {
  private held: Held[] = [];
  private chars = 0;
  private readonly maxMessages: number;
  private readonly maxAgeMs: number;
  private readonly maxChars: number;

  constructor(
    limits: OutboxLimits,
    private readonly warn: (message: string) => void,
    private readonly now: () => number = Date.now,
  ) {
    this.maxMessages = limits.maxMessages ?? OUTBOX_DEFAULTS.maxMessages;
    this.maxAgeMs = limits.maxAgeMs ?? OUTBOX_DEFAULTS.maxAgeMs;
    this.maxChars = limits.maxChars ?? OUTBOX_DEFAULTS.maxChars;
  }

  get size(): number {
    return this.held.length;
  }

  /** Keeps a message for the next connection, after those already kept. */
  hold(message: CallFrame): void {
    this.held.push({ ...message, at: this.now() });
    this.chars += message.frame.length;
    this.trim();
  }

  /**
   * Puts back messages a connection took but could not write. They are older
   * than anything held since, so they go first: a call's cost reports must
   * still reach the daemon before its result.
   */
  restore(messages: readonly CallFrame[]): void {
    if (messages.length === 0) return;
    const at = this.now();
    this.held.unshift(...messages.map((m) => ({ ...m, at })));
    for (const m of messages) this.chars += m.frame.length;
    this.trim();
  }

  /** Everything still worth sending, oldest first; the outbox is empty after. */
  take(): CallFrame[] {
    this.expire();
    const out = this.held.map(({ callId, frame }) => ({ callId, frame }));
    this.held = [];
    this.chars = 0;
    return out;
  }

  private trim(): void {
    this.expire();
    const dropped: Held[] = [];
    while (this.held.length > this.maxMessages || (this.chars > this.maxChars && this.held.length > 0)) {
      const oldest = this.held.shift()!;
      this.chars -= oldest.frame.length;
      dropped.push(oldest);
    }
    if (dropped.length > 0) {
      this.report(dropped, `the worker keeps at most ${this.maxMessages} messages (${this.maxChars} characters) while disconnected`);
    }
  }

  private expire(): void {
    const cutoff = this.now() - this.maxAgeMs;
    let n = 0;
    while (n < this.held.length && this.held[n]!.at < cutoff) n++;
    if (n === 0) return;
    const dropped = this.held.splice(0, n);
    for (const m of dropped) this.chars -= m.frame.length;
    this.report(dropped, `they waited more than ${Math.round(this.maxAgeMs / 1000)} s for a connection`);
  }

  private report(dropped: Held[], why: string): void {
    const calls = [...new Set(dropped.map((m) => m.callId))];
    const shown = calls.slice(0, 5).join(", ") + (calls.length > 5 ? `, and ${calls.length - 5} more` : "");
    this.warn(`Wardrik: dropped ${dropped.length} unsent message(s) of call(s) ${shown}: ${why}.`);
  }
}
