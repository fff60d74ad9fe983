/**
 * Waiting work of several orgs, served fairly (start-time fair queueing,
 * every item counted as the same work: one piece of a request or of a turn,
 * one transaction). Here in store/ since both the database's waiting
 * transactions (fair-checkout.ts, sqlite-db.ts) and the runtime's pieces of
 * work (runtime/fair-share.ts) queue in it.
 * Each org has a queue of its own, first in first out. An item's tag is one
 * past its org's previous item, and never behind the tag of the item served
 * last, the queue's clock; the item with the lowest tag is served next (the
 * earlier pushed on a tie). So orgs with waiting work take turns, one item
 * each, and an org that comes with work, or comes back after a wait, goes
 * ahead of another org's backlog: a thousand items of one org make another
 * org's one item wait for none of them.
 */
export class OrgFairQueue<T> {
  private readonly byOrg = new Map<string, { tag: number; seq: number; item: T }[]>();
  /** The tag of the item served last. */
  private clock = 0;
  private pushed = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(org: string, item: T): void {
    let queue = this.byOrg.get(org);
    if (!queue) this.byOrg.set(org, (queue = []));
    const last = queue.at(-1);
    queue.push({ tag: last ? Math.max(last.tag + 1, this.clock) : this.clock, seq: this.pushed++, item });
    this.count++;
  }

  /** The next item: the head of the org queue with the lowest tag. */
  shift(): T | undefined {
    let next: { tag: number; seq: number; item: T }[] | undefined;
    let org = "";
    for (const [o, queue] of this.byOrg) {
      const head = queue[0]!;
      if (!next || head.tag < next[0]!.tag || (head.tag === next[0]!.tag && head.seq < next[0]!.seq)) {
        next = queue;
        org = o;
      }
    }
    if (!next) return undefined;
    const served = next.shift()!;
    if (next.length === 0) this.byOrg.delete(org);
    this.clock = served.tag;
    this.count--;
    return served.item;
  }

  /** Items of `org` waiting. */
  waiting(org: string): number {
    return this.byOrg.get(org)?.length ?? 0;
  }
}
