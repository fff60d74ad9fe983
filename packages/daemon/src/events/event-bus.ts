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

  publish(event: StoredEvent): void {
    const set = this.byAgent.get(event.agent);
    if (set) for (const l of set) safeCall(l, event);
    for (const l of this.all) safeCall(l, event);
  }
}

function safeCall(listener: Listener, event: StoredEvent): void {
  try {
    listener(event);
  } catch {
    // A broken follower must not break the writer.
  }
}
