import type { EventBus, StoredEvent } from "../events/event-bus.js";
import type { Store } from "../store/store.js";

const PAGE = 1000;

/**
 * An agent's events after a sequence number, in order, each once: from the
 * in-process bus as they commit, with the store read first (what committed
 * before the bus was listened to), when another node of a cluster says it
 * wrote some (an agent it runs publishes on that node's bus), and whenever a
 * wait or `lookMs` ends empty (in case that word was lost). Subscribes at once, so
 * nothing committed after `after` is missed.
 */
export class AgentFollower {
  private readonly live: StoredEvent[] = [];
  private wake: (() => void) | undefined;
  private backfilled = false;
  private closed = false;
  /** Another node wrote events of the agent since the last read of the store. */
  private poked = false;
  private readonly unsubscribe: () => void;
  private readonly offPoke: () => void;

  constructor(
    private readonly store: Store,
    bus: EventBus,
    private readonly agentId: string,
    private after: number,
    /** Read the store after this long without a word (see events/own-look.ts); undefined: only when a wait ends. */
    private readonly lookMs?: number,
  ) {
    this.unsubscribe = bus.subscribe(agentId, (e) => {
      this.live.push(e);
      this.wake?.();
    });
    this.offPoke = bus.onPoke(agentId, () => {
      this.poked = true;
      this.wake?.();
    });
  }

  /** The next events; [] when `waitMs` passed without any or `signal` aborted. */
  async next(waitMs: number, signal: AbortSignal): Promise<StoredEvent[]> {
    if (!this.backfilled) {
      this.backfilled = true;
      const stored = await this.read();
      if (stored.length > 0) return stored;
    }
    const deadline = Date.now() + waitMs;
    for (;;) {
      if (this.live.length === 0 && !this.poked && !signal.aborted && !this.closed)
        await this.wait(Math.min(deadline - Date.now(), this.lookMs ?? Infinity), signal);
      if (signal.aborted || this.closed) return [];
      const fromBus = this.takeLive();
      // Nothing new from the bus (a poke, a look, or a gap before a bus event): the store has it, if anything.
      const events = fromBus.length > 0 ? fromBus : await this.read();
      // A bus event already read from the store wakes the wait too: keep waiting until something new or the deadline.
      if (events.length > 0 || Date.now() >= deadline) return events;
    }
  }

  close(): void {
    this.closed = true;
    this.unsubscribe();
    this.offPoke();
    this.wake?.();
  }

  /**
   * The bus's events that follow on from the last one taken. An agent's
   * sequence numbers have no gaps and commit in order, so a bus event that is
   * not the next one shows that another node wrote those between: they are
   * read from the store first (it has them: they committed earlier).
   */
  private takeLive(): StoredEvent[] {
    const out: StoredEvent[] = [];
    this.live.sort((a, b) => a.seq - b.seq);
    while (this.live.length > 0) {
      const e = this.live[0]!;
      if (e.seq > this.after + 1) {
        this.poked = true;
        break;
      }
      this.live.shift();
      if (e.seq <= this.after) continue;
      out.push(e);
      this.after = e.seq;
    }
    return out;
  }

  /** One page from the store; another read follows at once if it was full. */
  private async read(): Promise<StoredEvent[]> {
    this.poked = false;
    const page = await this.store.events.list(this.agentId, this.after, PAGE);
    if (page.length === PAGE) this.poked = true;
    const out = page.filter((e) => e.seq > this.after);
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
