import type { StoredEvent } from "../events/event-bus.js";
import type { FeedPage } from "../store/event-feed.js";

/** What a follower reads from and writes to: the store's feed and a client's stream. */
export interface FeedFollowerIo {
  /** One page of the feed after `cursor`. */
  read(cursor: string, limit: number): Promise<FeedPage>;
  /** Sends a page's events to the client. */
  send(events: (StoredEvent & { cursor: string })[]): Promise<unknown>;
  /** Tells the client the stream is alive (nothing else went out for a while). */
  keepAlive(): Promise<unknown>;
  /** Whether the client still listens. */
  open(): boolean;
}

export interface FeedFollowerTiming {
  /** Look again this often with nothing to wake the follower (and count towards the keep-alive). */
  pollMs: number;
  /** Read when a poll comes with nothing new announced: PostgreSQL, where an event can wait for an older transaction. */
  readOnPoll: boolean;
  /** The first wait before reading again for events held back by an older transaction. */
  heldBackFirstMs: number;
  /** A keep-alive after this long without a wake-up. */
  keepAliveMs: number;
  pageSize: number;
}

export const FEED_FOLLOWER_TIMING: Omit<FeedFollowerTiming, "readOnPoll"> = {
  pollMs: 1000,
  heldBackFirstMs: 5,
  keepAliveMs: 15_000,
  pageSize: 500,
};

/**
 * The loop behind a live org-wide feed. Its states:
 *
 * - reading: pages after the cursor until a short one; each page's events go
 *   to the client and move the cursor.
 * - waiting: until `wake()` (an event of the org committed here, or another
 *   node says it wrote some), or a timer: the poll, or a held-back retry.
 *
 * reading -> reading when a wake came during the read (it found nobody
 * waiting, so nothing else would read it); reading -> waiting otherwise.
 * waiting -> reading on a wake, on a held-back retry, and on a poll where
 * `readOnPoll`. A stopped follower ends at its next turn.
 *
 * Held back (PostgreSQL): the feed passes an event only once every older
 * transaction of its database has ended, and the end of the one that holds
 * it may wake nobody (it wrote no event, or it ended just after the read).
 * So the follower reads again after `heldBackFirstMs`, then after as long as
 * the same transaction has held the events already (never past `pollMs`):
 * an event comes at most about twice its wait late, with few reads when a
 * transaction runs long.
 */
export class FeedFollower {
  private pending = true;
  private stopped = false;
  private wakeUp: (() => void) | undefined;
  /** The transaction that held events back at the last read, and since when. */
  private heldBy: string | undefined;
  private heldSince = 0;
  private heldBackMs = 0;

  constructor(
    private cursor: string,
    private readonly io: FeedFollowerIo,
    private readonly timing: FeedFollowerTiming,
  ) {}

  /** Something may have changed: read again, now or once the read under way ends. */
  wake(): void {
    this.pending = true;
    this.wakeUp?.();
  }

  stop(): void {
    this.stopped = true;
    this.wakeUp?.();
  }

  /** Follows until the client leaves or `stop()`. */
  async run(): Promise<void> {
    let idleMs = 0;
    while (this.following()) {
      if (this.pending) {
        this.pending = false;
        await this.readAll();
        // A wake that came during the read found nobody waiting: read again at once.
        if (this.pending) continue;
      }
      if (!this.following()) return;
      const waitMs = this.heldBackMs || this.timing.pollMs;
      await this.waitUpTo(waitMs);
      if (this.pending) {
        idleMs = 0;
        continue;
      }
      idleMs += waitMs;
      this.pending = this.heldBackMs > 0 || this.timing.readOnPoll;
      if (idleMs >= this.timing.keepAliveMs && this.following()) {
        idleMs = 0;
        await this.io.keepAlive();
      }
    }
  }

  private following(): boolean {
    return !this.stopped && this.io.open();
  }

  private async readAll(): Promise<void> {
    for (;;) {
      const page = await this.io.read(this.cursor, this.timing.pageSize);
      if (page.events.length > 0) await this.io.send(page.events);
      this.cursor = page.cursor;
      if (page.events.length < this.timing.pageSize) {
        this.noteHeldBack(page.heldBy);
        return;
      }
    }
  }

  private noteHeldBack(by: string | undefined): void {
    if (by !== this.heldBy) this.heldSince = Date.now();
    this.heldBy = by;
    this.heldBackMs = by ? Math.min(this.timing.pollMs, Math.max(this.timing.heldBackFirstMs, Date.now() - this.heldSince)) : 0;
  }

  private waitUpTo(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      this.wakeUp = done;
    });
  }
}
