import { typeMatches } from "@wardrik/protocol";

/**
 * Which events the followers of each other node of a cluster want to hear
 * about: of every agent (`all`: an org-wide follower without an agent
 * filter) or of a set of agents (per-agent streams, feeds filtered by
 * agent), and of every type or only of some (`types`: the union of the
 * followers' type filters; absent when any follower takes every type). The
 * event relay tells a node only about those. Each node announces its whole
 * interest (never a change), when it changes and with every hello, so a lost
 * announcement mends itself; an interest not renewed within `ttlMs` (its
 * node died) is forgotten.
 */
export interface Interest {
  all: boolean;
  agents: ReadonlySet<string>;
  /** Event type patterns (`turn.completed`, `call.*`); absent: every type. */
  types?: readonly string[];
}

/**
 * An announcement's text: `+TYPES?AGENTS`, where TYPES is `*` (every type)
 * or patterns and AGENTS is `*` or IDs (empty: none), each list separated by
 * commas. The release before types sent `?AGENTS` (every type).
 */
export function formatInterest(i: Interest): string {
  return `+${i.types ? i.types.join(",") : "*"}?${i.all ? "*" : [...i.agents].join(",")}`;
}

/** Whether a message's rest (after `NODE|`) is an announcement, in either form. */
export function isInterest(text: string): boolean {
  return text.startsWith("?") || text.startsWith("+");
}

export function parseInterest(text: string): Interest {
  const q = text.indexOf("?");
  const agents = text.slice(q + 1);
  const typesText = text.startsWith("+") && q > 0 ? text.slice(1, q) : "*";
  const types = typesText.split(",").filter(Boolean);
  const interest: Interest =
    agents === "*" ? { all: true, agents: new Set() } : { all: false, agents: new Set(agents.split(",").filter(Boolean)) };
  return types.includes("*") || types.length === 0 ? interest : { ...interest, types };
}

/** Whether every event `wider` passes, `narrower` passes too (by pattern, not by meaning: `call.*` does not cover `call.started`). */
function coversTypes(narrower: readonly string[] | undefined, wider: readonly string[] | undefined): boolean {
  if (!narrower) return true;
  return wider !== undefined && wider.every((t) => narrower.includes(t));
}

export class OtherNodesInterest {
  private readonly byNode = new Map<string, Interest & { until: number }>();

  constructor(private readonly ttlMs: number) {}

  /**
   * Records what `node` wants; returns what it wants now and was not told
   * about before (all: it now follows everything), for a catch-up notice:
   * events committed before this node heard the announcement were told to
   * nobody. When the node widens its types, every agent it wants counts as new.
   */
  set(node: string, wants: Interest, now = Date.now()): Interest {
    const before = this.live(node, now);
    this.byNode.set(node, { ...wants, until: now + this.ttlMs });
    const widened = before !== undefined && !coversTypes(before.types, wants.types);
    if (wants.all) return { all: !before?.all || widened, agents: new Set() };
    if (before?.all && !widened) return { all: false, agents: new Set() };
    return { all: false, agents: new Set(widened ? wants.agents : [...wants.agents].filter((a) => !before?.agents.has(a))) };
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

  /** Whether any other node (still alive) follows events of this agent and type. */
  wants(agent: string, type: string, now = Date.now()): boolean {
    for (const [node, i] of this.byNode) {
      if (i.until < now) {
        this.byNode.delete(node);
        continue;
      }
      if ((i.all || i.agents.has(agent)) && (!i.types || i.types.some((t) => typeMatches(t, type)))) return true;
    }
    return false;
  }

  private live(node: string, now: number): (Interest & { until: number }) | undefined {
    const i = this.byNode.get(node);
    return i && i.until >= now ? i : undefined;
  }
}
