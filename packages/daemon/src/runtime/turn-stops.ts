import { TurnStop } from "./engine-options.js";

/**
 * The abort controllers of the turns an awake agent is driving. Owned by the
 * agent's driver; the turn driver registers a turn while it advances it, and
 * the cancel paths (a person, another node) stop it through here.
 */
export class TurnStops {
  private readonly running = new Map<string, AbortController>();

  /** Whether the turn is being advanced here now. */
  has(turnId: string): boolean {
    return this.running.has(turnId);
  }

  /** The turn runs under `controller` until the returned function is called. */
  track(turnId: string, controller: AbortController): () => void {
    this.running.set(turnId, controller);
    return () => {
      if (this.running.get(turnId) === controller) this.running.delete(turnId);
    };
  }

  /** Stops the turn if it runs here (its end is already recorded by whoever cancelled it). */
  cancel(turnId: string): void {
    this.running.get(turnId)?.abort(new TurnStop("cancelled"));
  }

  /** Stops every turn running here (the driver closes). */
  stopAll(reason: TurnStop): void {
    for (const c of this.running.values()) c.abort(reason);
  }
}
