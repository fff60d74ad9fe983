/** A call this worker ran to its end, as its finished-calls store keeps it. */
export interface FinishedCallRecord {
  /** The call's idempotency key: the same on every attempt, on every node. */
  key: string;
  callId: string;
  /** The attempt that ran. */
  attempt: number;
  /** When it finished, in milliseconds since the epoch. */
  at: number;
  /** The result as JSON text: `{"ok":true,"output":...}` or `{"ok":false,"error":"..."}`. */
  result: string;
}

/**
 * Where a worker remembers the calls it finished, so it can answer for them
 * when a daemon lost the answer (it restarted before storing it, or the
 * answer died with a connection): the daemon asks the workers before it asks
 * a person, and a call sent again is answered instead of run twice.
 *
 * The default keeps them in memory, for the life of the process;
 * `FileFinishedCalls` keeps them in a file, so a restarted worker process
 * still answers for what the one before it finished. `get` and `put` may be
 * synchronous or return promises; a call's result is sent to the daemon only
 * once `put` has finished.
 */
export interface FinishedCallStore {
  /** Reads what earlier processes remembered; `listen()` calls it once, before it connects. */
  open?(): void | Promise<void>;
  /** The finished call with this idempotency key, if remembered. */
  get(key: string): FinishedCallRecord | undefined | Promise<FinishedCallRecord | undefined>;
  put(record: FinishedCallRecord): void | Promise<void>;
  /** Releases what the store holds open; `close()` calls it after the last result went out. */
  close?(): void | Promise<void>;
}

/** How much a finished-calls store keeps. */
export interface FinishedCallLimits {
  /** Calls kept at most; past it the oldest go first. */
  maxCalls?: number;
  /** A call finished longer ago than this is forgotten. */
  maxAgeMs?: number;
  /** Characters of results kept at most, over all calls (memory only). */
  maxChars?: number;
}

export const MEMORY_FINISHED_DEFAULTS = { maxCalls: 1000, maxAgeMs: 15 * 60_000, maxChars: 64 * 1024 * 1024 } as const;

/**
 * Finished calls in memory, bounded by count, age and characters (by default
 * those of the outbox: 1,000 calls, 15 minutes, 64 Mi characters).
 */
export class MemoryFinishedCalls implements FinishedCallStore {
  private readonly byKey = new Map<string, FinishedCallRecord>();
  private order: FinishedCallRecord[] = [];
  private head = 0;
  private chars = 0;
  private readonly maxCalls: number;
  private readonly maxAgeMs: number;
  private readonly maxChars: number;

  constructor(
    limits: FinishedCallLimits = {},
    private readonly now: () => number = Date.now,
  ) {
    this.maxCalls = limits.maxCalls ?? MEMORY_FINISHED_DEFAULTS.maxCalls;
    this.maxAgeMs = limits.maxAgeMs ?? MEMORY_FINISHED_DEFAULTS.maxAgeMs;
    this.maxChars = limits.maxChars ?? MEMORY_FINISHED_DEFAULTS.maxChars;
  }

  /** Calls remembered now. */
  get size(): number {
    return this.byKey.size;
  }

  put(record: FinishedCallRecord): void {
    this.byKey.set(record.key, record);
    this.order.push(record);
    this.chars += record.result.length;
    this.prune();
  }

  get(key: string): FinishedCallRecord | undefined {
    const record = this.byKey.get(key);
    if (!record || record.at < this.now() - this.maxAgeMs) return undefined;
    return record;
  }

  /** Every call remembered, oldest first. */
  records(): FinishedCallRecord[] {
    const cutoff = this.now() - this.maxAgeMs;
    return this.order.slice(this.head).filter((r) => this.byKey.get(r.key) === r && r.at >= cutoff);
  }

  private prune(): void {
    const cutoff = this.now() - this.maxAgeMs;
    while (this.head < this.order.length) {
      const oldest = this.order[this.head]!;
      const live = this.order.length - this.head;
      if (live <= this.maxCalls && this.chars <= this.maxChars && oldest.at >= cutoff) break;
      this.head++;
      this.chars -= oldest.result.length;
      // A key remembered again later keeps its newer entry.
      if (this.byKey.get(oldest.key) === oldest) this.byKey.delete(oldest.key);
    }
    // Drop the consumed front now and then rather than shifting on every call.
    if (this.head > 1024 && this.head * 2 > this.order.length) {
      this.order = this.order.slice(this.head);
      this.head = 0;
    }
  }
}
