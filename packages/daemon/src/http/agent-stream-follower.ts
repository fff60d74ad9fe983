import type { StoredEvent } from "../events/event-bus.js";

/** A frame that is not an event of the record (a model's live text), sent in its place among the events. */
export interface LiveFrame {
  frame: Uint8Array;
}

/** What goes out on the stream: events of the record, and live frames between them. */
export type StreamItem = StoredEvent | LiveFrame;

export const isFrame = (item: StreamItem): item is LiveFrame => "frame" in item;

/** What the loop behind one agent's event stream reads from and writes to. */
export interface AgentStreamIo {
  /**
   * The agent's events after `after`, in order: those the stream shows, and maybe others that `shows` then
   * leaves out (a filter the store cannot apply in full). A page shorter than `limit` is the last.
   */
  read(after: number, limit: number): Promise<StoredEvent[]>;
  /** Sends events (and live frames, in their place among them) to the client, in one write. */
  send(items: StreamItem[]): Promise<unknown>;
  /**
   * Resolves once the work under way in this process has gone as far as it can at once (the next steps of the
   * turns that committed the events): live events wait for it, so what they commit goes in the same write.
   * Without it, live events go out at once.
   */
  settle?(): Promise<void>;
  /** Tells the client the stream is alive. */
  keepAlive(): Promise<unknown>;
  /** Whether the client still listens. */
  open(): boolean;
}

export interface AgentStreamTiming {
  /** Read the store after this long with nothing to wake the stream (events/own-look.ts); undefined: never. */
  lookMs: number | undefined;
  /** A keep-alive once nothing was written for this long. */
  keepAliveMs: number;
  pageSize: number;
}

/**
 * The loop behind `/v1/agents/ID/events/stream`: every event of the agent
 * after the client's last, in order, each once. Its states:
 *
 * - catching up: pages from the store after the last event sent, until a
 *   short page (at the start, and whenever the stream is stale);
 * - sending: events committed in this process, as the bus brings them;
 * - waiting: for the bus, a poke, the own look or the keep-alive.
 *
 * The bus brings only what this process commits. Sequence numbers of an
 * agent have no gaps and commit in order, so an event whose number is not
 * the next one shows that another node of a cluster wrote the ones between:
 * the stream is then stale and reads the store, which has them (they
 * committed first). The same when another node says it wrote events (a
 * poke), and at every own look, in case that word was lost.
 *
 * `through` is the last number accounted for: sent, or known not to pass
 * the filter. Every event of the bus moves it, whatever its type, so a
 * filtered stream still sees gaps; a read from the store moves it to the
 * last event read and to the last one the bus had shown before the read.
 */
export class AgentStreamFollower {
  private readonly live: StreamItem[] = [];
  private stale = false;
  private stopped = false;
  private through: number;
  private busSeq = 0;
  private lastWrite = Date.now();
  private wakeUp: (() => void) | undefined;

  constructor(
    private after: number,
    private readonly shows: (e: StoredEvent) => boolean,
    private readonly io: AgentStreamIo,
    private readonly timing: AgentStreamTiming,
  ) {
    this.through = after;
  }

  /** An event of the agent committed in this process (of any type). */
  published(e: StoredEvent): void {
    this.busSeq = Math.max(this.busSeq, e.seq);
    if (e.seq <= this.through) return;
    if (e.seq === this.through + 1) {
      this.through = e.seq;
      if (!this.shows(e)) return;
      this.live.push(e);
    } else {
      this.stale = true;
    }
    this.wakeUp?.();
  }

  /** Another node says it wrote events of the agent. */
  poked(): void {
    this.stale = true;
    this.wakeUp?.();
  }

  /** A frame for the stream that is not an event (a delta): it goes out in order with the events around it. */
  sendAlong(frame: Uint8Array): void {
    this.live.push({ frame });
    this.wakeUp?.();
  }

  stop(): void {
    this.stopped = true;
    this.wakeUp?.();
  }

  async run(): Promise<void> {
    await this.catchUp();
    while (this.following()) {
      if (this.stale) {
        this.stale = false;
        await this.catchUp();
        continue;
      }
      if (this.live.length > 0) {
        // One write for what the work under way commits meanwhile: each write costs a syscall and wakes the client.
        await this.io.settle?.();
        if (!this.following()) break;
        // Everything that arrived since the last write goes out in one write.
        const batch = this.live.splice(0).filter((e) => isFrame(e) || e.seq > this.after);
        const last = batch.findLast((e): e is StoredEvent => !isFrame(e));
        if (last) this.after = last.seq;
        if (batch.length > 0) {
          await this.io.send(batch);
          this.lastWrite = Date.now();
        }
        continue;
      }
      // Due from the last write, whatever woke the stream meanwhile: a proxy cuts a stream that sends nothing.
      const keepAliveIn = this.timing.keepAliveMs - (Date.now() - this.lastWrite);
      if (keepAliveIn <= 0) {
        await this.io.keepAlive();
        this.lastWrite = Date.now();
        continue;
      }
      const woken = await this.waitUpTo(Math.min(this.timing.lookMs ?? Infinity, keepAliveIn));
      if (!woken && this.timing.lookMs !== undefined) this.stale = true;
    }
  }

  private following(): boolean {
    return !this.stopped && this.io.open();
  }

  private async catchUp(): Promise<void> {
    const busSeen = this.busSeq;
    for (;;) {
      const page = await this.io.read(this.after, this.timing.pageSize);
      if (page.length > 0) {
        this.after = page.at(-1)!.seq;
        const shown = page.filter(this.shows);
        if (shown.length > 0) {
          await this.io.send(shown);
          this.lastWrite = Date.now();
        }
      }
      // A client that left mid-backlog is not read for any further.
      if (page.length < this.timing.pageSize || !this.following()) break;
    }
    // The read saw every event committed before it started: those the bus had shown, and all before them.
    this.through = Math.max(this.through, this.after, busSeen);
  }

  /** Resolves true when woken, false when `ms` passed. */
  private waitUpTo(ms: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.wakeUp = undefined;
        resolve(false);
      }, ms);
      timer.unref();
      this.wakeUp = () => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve(true);
      };
    });
  }
}
