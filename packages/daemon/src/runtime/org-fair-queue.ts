/**
 * Waiting work of several orgs, served round robin: each org has a queue of
 * its own (first in, first out), and the orgs that have work take turns, one
 * item each. An org with a thousand items waiting makes another org's one
 * item wait for at most one of them, not all of them; an org that comes with
 * work joins the rotation at its end.
 *
 * (Deficit round robin with a quantum of one item, as every item here stands
 * for about the same work: one piece of a request or of a turn.)
 */
export class OrgFairQueue<T> {
  /** Orgs with items, in the order they are served next (a Map keeps insertion order). */
  private readonly byOrg = new Map<string, T[]>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(org: string, item: T): void {
    const queue = this.byOrg.get(org);
    if (queue) queue.push(item);
    else this.byOrg.set(org, [item]);
    this.count++;
  }

  /** The next item: the first of the org whose turn it is; that org moves to the end of the rotation. */
  shift(): T | undefined {
    const first = this.byOrg.entries().next();
    if (first.done) return undefined;
    const [org, queue] = first.value;
    const item = queue.shift()!;
    this.count--;
    this.byOrg.delete(org);
    if (queue.length > 0) this.byOrg.set(org, queue);
    return item;
  }

  /** Items of `org` waiting. */
  waiting(org: string): number {
    return this.byOrg.get(org)?.length ?? 0;
  }
}
