export interface Holder {
  lastUsed: number;
  inFlight: number;
}

/**
 * The awake agents that keep one MCP server running. An agent holds the
 * server from its first list or call until it releases it (it fell asleep)
 * or has not used it for `holderIdleMs`; when the last holder goes, the
 * server stops after `stopGraceMs` (another agent often follows).
 */
export class ServerHolders {
  private readonly holders = new Map<string, Holder>();
  private stopTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly o: { holderIdleMs: number; stopGraceMs: number },
    /** Stops the server: nobody holds it any more. */
    private readonly stop: () => void,
  ) {}

  hold(agentId: string): Holder {
    if (this.closed) return { lastUsed: 0, inFlight: 0 }; // nothing to keep running
    let holder = this.holders.get(agentId);
    if (!holder) this.holders.set(agentId, (holder = { lastUsed: Date.now(), inFlight: 0 }));
    holder.lastUsed = Date.now();
    if (this.stopTimer) {
      clearTimeout(this.stopTimer);
      this.stopTimer = undefined;
    }
    this.sweepTimer ??= setInterval(() => this.sweep(), Math.max(10, Math.min(this.o.holderIdleMs, 60_000))).unref();
    return holder;
  }

  /** The agent no longer needs the server; the last release stops it. */
  release(agentId: string): void {
    if (!this.holders.delete(agentId) || this.holders.size > 0) return;
    this.scheduleStop();
  }

  ids(): string[] {
    return [...this.holders.keys()];
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.stopTimer);
    clearInterval(this.sweepTimer);
    this.holders.clear();
  }

  private scheduleStop(): void {
    if (this.stopTimer) clearTimeout(this.stopTimer);
    clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    if (this.o.stopGraceMs <= 0) {
      this.stop();
      return;
    }
    this.stopTimer = setTimeout(() => {
      this.stopTimer = undefined;
      if (this.holders.size === 0) this.stop();
    }, this.o.stopGraceMs).unref();
  }

  private sweep(): void {
    const cutoff = Date.now() - this.o.holderIdleMs;
    let dropped = false;
    for (const [agent, h] of this.holders) {
      if (h.inFlight === 0 && h.lastUsed <= cutoff) {
        this.holders.delete(agent);
        dropped = true;
      }
    }
    if (dropped && this.holders.size === 0) this.scheduleStop();
  }
}
