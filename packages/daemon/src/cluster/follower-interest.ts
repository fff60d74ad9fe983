/**
 * Which agents the followers of each other node of a cluster want to hear
 * about: every agent (`all`: an org-wide follower without an agent filter),
 * or a set of agents (per-agent streams, feeds filtered by agent). The event
 * relay tells a node only about those. Each node announces its whole
 * interest (never a change), when it changes and with every hello, so a lost
 * announcement mends itself; an interest not renewed within `ttlMs` (its
 * node died) is forgotten.
 */
export interface Interest {
  all: boolean;
  agents: ReadonlySet<string>;
}

/** An announcement's text: `*`, or the agents' IDs separated by commas (empty: none). */
export function formatInterest(i: Interest): string {
  return i.all ? "*" : [...i.agents].join(",");
}

export function parseInterest(text: string): Interest {
  if (text === "*") return { all: true, agents: new Set() };
  return { all: false, agents: new Set(text.split(",").filter(Boolean)) };
}

export class OtherNodesInterest {
  private readonly byNode = new Map<string, Interest & { until: number }>();

  constructor(private readonly ttlMs: number) {}

  /**
   * Records what `node` wants; returns what it wants now and did not before
   * (all: it now follows everything), for a catch-up notice: events committed
   * before this node heard the announcement were told to nobody.
   */
  set(node: string, wants: Interest, now = Date.now()): Interest {
    const before = this.live(node, now);
    this.byNode.set(node, { ...wants, until: now + this.ttlMs });
    if (wants.all) return { all: !before?.all, agents: new Set() };
    if (before?.all) return { all: false, agents: new Set() };
    return { all: false, agents: new Set([...wants.agents].filter((a) => !before?.agents.has(a))) };
  }

  /**
   * A node heard from that has not said what it wants (it just started, or
   * runs a release that never says): it is told about every agent until it does.
   */
  heardFrom(node: string, now = Date.now()): void {
    const known = this.live(node, now);
    if (known) known.until = now + this.ttlMs;
    else this.byNode.set(node, { all: true, agents: new Set(), until: now + this.ttlMs });
  }

  /** Whether any other node (still alive) follows this agent. */
  wants(agent: string, now = Date.now()): boolean {
    for (const [node, i] of this.byNode) {
      if (i.until < now) {
        this.byNode.delete(node);
        continue;
      }
      if (i.all || i.agents.has(agent)) return true;
    }
    return false;
  }

  private live(node: string, now: number): (Interest & { until: number }) | undefined {
    const i = this.byNode.get(node);
    return i && i.until >= now ? i : undefined;
  }
}
