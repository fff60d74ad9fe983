import type { WardrikCloudEvent } from "@wardrik/protocol";

export type StoredEvent = WardrikCloudEvent & { agent: string; org: string };
type Listener = (event: StoredEvent) => void;

/**
 * In-process fan-out of committed events (SSE followers, webhooks, `ask`).
 * Events are published only after their transaction commits, so a follower
 * never sees an event that a rollback took back.
 */
export class EventBus {
  private readonly byAgent = new Map<string, Set<Listener>>();
  private readonly all = new Set<Listener>();
  private readonly pokes = new Map<string, Set<(agentId: string) => void>>();
  private readonly interestListeners = new Set<() => void>();

  /**
   * Listens for word that an agent has new events this process did not write
   * (another node of a cluster did): the listener reads them from the store.
   */
  onPoke(agentId: string | "*", listener: (agentId: string) => void): () => void {
    let set = this.pokes.get(agentId);
    if (!set) {
      this.pokes.set(agentId, (set = new Set()));
      this.interestChanged();
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.pokes.get(agentId) === set) {
        this.pokes.delete(agentId);
        this.interestChanged();
      }
    };
  }

  /** The agents this process listens for pokes about (`all`: some listener wants every agent's). */
  interest(): { all: boolean; agents: Set<string> } {
    const agents = new Set(this.pokes.keys());
    const all = agents.delete("*");
    return { all, agents };
  }

  /** Calls `listener` whenever `interest()` may have changed. */
  onInterestChange(listener: () => void): () => void {
    this.interestListeners.add(listener);
    return () => this.interestListeners.delete(listener);
  }

  /** Another node says events of any agent may have been missed: every poke listener reads again. */
  pokeAll(): void {
    for (const [key, set] of this.pokes) for (const l of set) safeCall(l, key);
  }

  /** Another node committed events of `agentId`. */
  poke(agentId: string): void {
    for (const key of [agentId, "*"]) {
      const set = this.pokes.get(key);
      if (set) for (const l of set) safeCall(l, agentId);
    }
  }

  subscribe(agentId: string | "*", listener: Listener): () => void {
    if (agentId === "*") {
      this.all.add(listener);
      return () => this.all.delete(listener);
    }
    let set = this.byAgent.get(agentId);
    if (!set) {
      set = new Set();
      this.byAgent.set(agentId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.byAgent.delete(agentId);
    };
  }

  private interestChanged(): void {
    for (const l of this.interestListeners) safeCall(l, undefined);
  }

  publish(event: StoredEvent): void {
    const set = this.byAgent.get(event.agent);
    if (set) for (const l of set) safeCall(l, event);
    for (const l of this.all) safeCall(l, event);
  }
}

function safeCall<T>(listener: (value: T) => void, event: T): void {
  try {
    listener(event);
  } catch {
    // A broken follower must not break the writer.
  }
}
