/** A place among an org's running turns, held while one turn runs; given back once. */
export interface TurnSlot {
  release(): void;
}

/**
 * The place of a child turn (one run for an agents/NAME call): its caller's.
 * The calling turn keeps its slot while its call waits for the child, so the
 * child takes none; taking one could wait forever behind callers that all
 * wait for their children.
 */
export const CALLERS_SLOT: TurnSlot = { release: () => undefined };

interface Waiter {
  grant(slot: TurnSlot): void;
}

/**
 * At most `limit` running turns per org on this node (config.yaml
 * `limits.org_running_turns`). A turn past the limit waits, first come first
 * served within its org, and starts as soon as one of the org's turns ends or
 * parks; other orgs never wait for it. A slot given back while turns wait
 * passes straight to the first of them, so a busy conversation cannot take
 * it again ahead of one that has waited.
 */
export class OrgTurnSlots {
  private readonly held = new Map<string, number>();
  private readonly waiting = new Map<string, Waiter[]>();

  constructor(readonly limit: number) {}

  /** A slot now if the org has one free and no turn of it waits; else undefined. */
  tryTake(org: string): TurnSlot | undefined {
    if ((this.held.get(org) ?? 0) >= this.limit || (this.waiting.get(org)?.length ?? 0) > 0) return undefined;
    this.held.set(org, (this.held.get(org) ?? 0) + 1);
    return this.slot(org);
  }

  /** A slot as soon as one is free; `signal` gives the wait up (rejecting with its reason). */
  take(org: string, signal?: AbortSignal): Promise<TurnSlot> {
    const now = this.tryTake(org);
    if (now) return Promise.resolve(now);
    return new Promise<TurnSlot>((resolve, reject) => {
      const queue = this.waiting.get(org) ?? [];
      this.waiting.set(org, queue);
      const onAbort = () => {
        const i = queue.indexOf(waiter);
        if (i >= 0) queue.splice(i, 1);
        if (queue.length === 0 && this.waiting.get(org) === queue) this.waiting.delete(org);
        reject(signal!.reason);
      };
      const waiter: Waiter = {
        grant: (slot) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(slot);
        },
      };
      if (signal?.aborted) return reject(signal.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      queue.push(waiter);
    });
  }

  /** Turns of `org` running on this node, and waiting for a slot. */
  counts(org: string): { running: number; waiting: number } {
    return { running: this.held.get(org) ?? 0, waiting: this.waiting.get(org)?.length ?? 0 };
  }

  private slot(org: string): TurnSlot {
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const queue = this.waiting.get(org);
        const next = queue?.shift();
        if (queue && queue.length === 0) this.waiting.delete(org);
        if (next) next.grant(this.slot(org));
        else {
          const n = (this.held.get(org) ?? 1) - 1;
          if (n > 0) this.held.set(org, n);
          else this.held.delete(org);
        }
      },
    };
  }
}
