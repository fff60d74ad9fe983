import { OrgFairQueue } from "./org-fair-queue.js";

/**
 * The connections of a pool handed out fairly between orgs. `pg`'s pool
 * serves waiting callers first come first served, so an org with a backlog
 * of transactions (sixty turns committing at once) would make another org's
 * one transaction wait for all of them to get a connection. Every checkout
 * first takes one of the pool's `size` places here, naming its org: while a
 * place is free it is taken at once (no promise, nothing queued); once all
 * are taken the caller waits in its org's queue, and a place given back goes
 * to the next in the orgs' rotation (OrgFairQueue: an org that comes with one
 * transaction goes ahead of another org's backlog). Since no more than
 * `size` callers ever hold a place, the pool itself never queues them.
 */
export class FairCheckout {
  private free: number;
  private readonly queue = new OrgFairQueue<() => void>();

  constructor(size: number) {
    this.free = size;
  }

  /** Takes a place for `org`: undefined when one was free (taken now), else a promise that resolves once it is `org`'s. */
  take(org: string): Promise<void> | undefined {
    if (this.free > 0) {
      this.free--;
      return undefined;
    }
    return new Promise<void>((resolve) => this.queue.push(org, resolve));
  }

  /** Gives a place back: to the next waiting caller in the rotation, or free. */
  give(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.free++;
  }

  /** Callers of `org` waiting for a place. */
  waiting(org: string): number {
    return this.queue.waiting(org);
  }
}
