import type { EventBus, StoredEvent } from "../events/event-bus.js";
import type { Store } from "../store/store.js";

/**
 * An agent's events after a sequence number, in order, each once: from the
 * in-process bus as they commit, with the store read first (what committed
 * before the bus was listened to) and again whenever a wait ends empty (an
 * agent run by another daemon of a cluster publishes on that daemon's bus).
 * Subscribes at once, so nothing committed after `after` is missed.
 */
export class AgentFollower {
  private readonly live: StoredEvent[] = [];
  private wake: (() => void) | undefined;
  private backfilled = false;
  private closed = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: Store,
    bus: EventBus,
    private readonly agentId: string,
    private after: number,
  ) {
    this.unsubscribe = bus.subscribe(agentId, (e) => {
      this.live.push(e);
      this.wake?.();
    });
  }

  /** The next events; [] when `waitMs` passed without any or `signal` aborted. */
  async next(waitMs: number, signal: AbortSignal): Promise<StoredEvent[]> {
    if (!this.backfilled) {
      this.backfilled = true;
      const stored = this.take(await this.store.events.list(this.agentId, this.after, 1000));
      if (stored.length > 0) return stored;
    }
    const deadline = Date.now() + waitMs;
    for (;;) {
      if (this.live.length === 0 && !signal.aborted && !this.closed) await this.wait(deadline - Date.now(), signal);
      if (signal.aborted || this.closed) return [];
      const events =
        this.live.length === 0 ? this.take(await this.store.events.list(this.agentId, this.after, 1000)) : this.take(this.live.splice(0));
      // A bus event already read from the store wakes the wait too: keep waiting until something new or the deadline.
      if (events.length > 0 || Date.now() >= deadline) return events;
    }
  }

  close(): void {
    this.closed = true;
    this.unsubscribe();
    this.wake?.();
  }

  private take(events: StoredEvent[]): StoredEvent[] {
    const out = events.filter((e) => e.seq > this.after).sort((a, b) => a.seq - b.seq);
    if (out.length > 0) this.after = out.at(-1)!.seq;
    return out;
  }

  private wait(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      signal.addEventListener("abort", done, { once: true });
      this.wake = done;
    });
  }
}
