import { OrgFairQueue } from "../store/org-fair-queue.js";

/**
 * The event loop shared fairly between orgs. Node runs callbacks first come
 * first served, so an org with a deep backlog (sixty requests in flight, as
 * many turns runnable) would make another org's one request or turn step wait
 * behind all of it. Each piece of work (a request once its token names the
 * org, each step of a turn) asks `enter(org)` first:
 *
 * - the first piece in a turn of the event loop, with nothing waiting, goes
 *   on at once (an idle or lightly loaded daemon adds no wait);
 * - any other waits in its org's queue, and the orgs with waiting pieces
 *   take turns (OrgFairQueue): one piece a turn of the event loop, after the
 *   loop has read the sockets, so that work arriving meanwhile (another org's
 *   request) is there to go ahead of the backlog's next piece.
 *
 * A piece runs until it waits on something (I/O, a model, a worker, the next
 * `enter`); nothing is held meanwhile, so no wait here can block another.
 */
export class FairShare {
  private readonly queue = new OrgFairQueue<() => void>();
  /** A piece started in this turn of the event loop (cleared at its end). */
  private startedThisTurn = false;
  private dispatching = false;

  /** Resolves when `org`'s piece of work may start. */
  enter(org: string): Promise<void> {
    if (!this.startedThisTurn && !this.dispatching) {
      this.startedThisTurn = true;
      // setImmediate runs once this turn of the event loop has read the sockets.
      setImmediate(() => (this.startedThisTurn = false));
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      this.queue.push(org, resolve);
      if (!this.dispatching) {
        this.dispatching = true;
        setImmediate(() => this.dispatch());
      }
    });
  }

  /**
   * Resolves at the end of a turn of the event loop (after its I/O) once no piece waits to run at the next one:
   * the work under way has then gone as far as it can without waiting on something else. At most `maxTurns`
   * turns of the loop later, however busy it stays.
   */
  async settled(maxTurns: number): Promise<void> {
    for (let turn = 0; turn < maxTurns; turn++) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (!this.dispatching) return;
    }
  }

  /** Pieces of `org` waiting for their turn. */
  waiting(org: string): number {
    return this.queue.waiting(org);
  }

  /** One piece, the next in the rotation; again at the next turn of the event loop while pieces wait. */
  private dispatch(): void {
    this.queue.shift()?.();
    if (this.queue.size > 0) setImmediate(() => this.dispatch());
    else this.dispatching = false;
  }
}
