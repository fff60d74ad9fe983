import { CallTable } from "@wardrik/protocol";

interface Finished {
  readonly callId: string;
  /** The result message after its `"attempt":N,`: the same for any attempt of the call. */
  readonly body: string;
  readonly at: number;
}

/**
 * Results of calls this worker finished lately. A daemon that lost a result
 * (it restarted before storing it, or the answer died with a connection)
 * may send the same call again, as a retry or after a person approved it; the
 * worker then answers with the result it has instead of running the call a
 * second time, so its effect (a charge, an email) happens once. Bounded like
 * the outbox: count, age and characters.
 */
export class FinishedCalls {
  private readonly byId = new CallTable<Finished>();
  private order: Finished[] = [];
  private head = 0;
  private chars = 0;

  constructor(
    private readonly maxCalls: number,
    private readonly maxAgeMs: number,
    private readonly maxChars: number,
    private readonly now: () => number = Date.now,
  ) {}

  remember(callId: string, body: string): void {
    const entry: Finished = { callId, body, at: this.now() };
    this.byId.set(callId, entry);
    this.order.push(entry);
    this.chars += body.length;
    this.prune();
  }

  /** The remembered result of `callId`, or undefined. */
  recall(callId: string): string | undefined {
    const entry = this.byId.get(callId);
    if (!entry) return undefined;
    if (entry.at < this.now() - this.maxAgeMs) return undefined;
    return entry.body;
  }

  private prune(): void {
    const cutoff = this.now() - this.maxAgeMs;
    while (this.head < this.order.length) {
      const oldest = this.order[this.head]!;
      const live = this.order.length - this.head;
      if (live <= this.maxCalls && this.chars <= this.maxChars && oldest.at >= cutoff) break;
      this.head++;
      this.chars -= oldest.body.length;
      // A call remembered again later keeps its newer entry.
      if (this.byId.get(oldest.callId) === oldest) this.byId.delete(oldest.callId);
    }
    // Drop the consumed front now and then rather than shifting on every call.
    if (this.head > 1024 && this.head * 2 > this.order.length) {
      this.order = this.order.slice(this.head);
      this.head = 0;
    }
  }
}
