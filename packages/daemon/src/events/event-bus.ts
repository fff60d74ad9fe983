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
  /** Poke listeners by agent (or "*"), each with the event types it wants (absent: every type). */
  private readonly pokes = new Map<string, Map<(agentId: string) => void, readonly string[] | undefined>>();
  private readonly interestListeners = new Set<() => void>();

  /**
   * Listens for word that an agent has new events this process did not write
   * (another node of a cluster did): the listener reads them from the store.
   * `types`: the event type patterns it shows (absent: every type), so that
   * other nodes can leave unsaid what no follower here would show.
   */
  onPoke(agentId: string | "*", listener: (agentId: string) => void, types?: readonly string[]): () => void {
    let map = this.pokes.get(agentId);
    if (!map) this.pokes.set(agentId, (map = new Map()));
    // A new function each call, so that the same listener added twice is removed once per call.
    const entry = (id: string) => listener(id);
    map.set(entry, types);
    this.interestChanged();
    return () => {
      if (!map.delete(entry)) return;
      if (map.size === 0 && this.pokes.get(agentId) === map) this.pokes.delete(agentId);
      this.interestChanged();
    };
  }

  /**
   * What this process's poke listeners follow: the agents (`all`: some
   * listener wants every agent's events) and the union of their type
   * patterns (absent when one of them takes every type).
   */
  interest(): { all: boolean; agents: Set<string>; types?: string[] } {
    const agents = new Set(this.pokes.keys());
    const all = agents.delete("*");
    const types = new Set<string>();
    for (const map of this.pokes.values())
      for (const t of map.values()) {
        if (!t || t.length === 0) return { all, agents };
        for (const one of t) types.add(one);
      }
    return types.size > 0 ? { all, agents, types: [...types].sort() } : { all, agents };
  }

  /** Calls `listener` whenever `interest()` may have changed (a poke listener came or went). */
  onInterestChange(listener: () => void): () => void {
    this.interestListeners.add(listener);
    return () => this.interestListeners.delete(listener);
  }

  /** Another node says events of any agent may have been missed: every poke listener reads again. */
  pokeAll(): void {
    for (const [key, map] of this.pokes) for (const l of [...map.keys()]) safeCall(l, key);
  }

  /** Another node committed events of `agentId`. */
  poke(agentId: string): void {
    for (const key of [agentId, "*"]) {
      const map = this.pokes.get(key);
      if (map) for (const l of [...map.keys()]) safeCall(l, agentId);
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
