/** An awake agent that uses an MCP server: when it last did, and how many of its calls are in flight. */
export interface Holder {
  lastUsed: number;
  inFlight: number;
}

/**
 * Which awake agents keep an MCP server running. A server nobody holds stops
 * after a grace period; a holder idle for too long (an agent that will not
 * sleep, yet stopped using the server) lets go by itself.
 */
export class McpHolders {
  private readonly holders = new Map<string, Holder>();
  private stopTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly o: { holderIdleMs: number; stopGraceMs: number },
    /** Stops the server: nobody holds it any more. */
    private readonly stopServer: () => void,
  ) {}

  hold(agentId: string): Holder {
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

  /** The agent holds the server no more; the last release stops it. */
  release(agentId: string): void {
    if (!this.holders.delete(agentId) || this.holders.size > 0) return;
    this.scheduleStop();
  }

  ids(): string[] {
    return [...this.holders.keys()];
  }

  /** Forgets every holder and timer (the server closes for good). */
  clear(): void {
    clearTimeout(this.stopTimer);
    clearInterval(this.sweepTimer);
    this.holders.clear();
  }

  private scheduleStop(): void {
    if (this.stopTimer) clearTimeout(this.stopTimer);
    clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    if (this.o.stopGraceMs <= 0) {
      this.stopServer();
      return;
    }
    this.stopTimer = setTimeout(() => {
      this.stopTimer = undefined;
      if (this.holders.size === 0) this.stopServer();
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
