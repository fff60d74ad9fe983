import { Cron } from "croner";
import { typeMatches } from "@wardrik/protocol";
import type { AgentDefinition, Trigger } from "../config/types.js";
import type { StoredEvent } from "../events/event-bus.js";
import type { AgentRow } from "../store/rows.js";

/** One trigger of one usable agent, compiled for firing. */
export interface IndexedTrigger {
  kind: "schedule" | "webhook" | "event";
  /** Stable within the agent: `schedule:CRON`, `webhook:NAME`, `event:AGENT:TYPES`, with `#2` for a repeat. */
  key: string;
  org: string;
  agentId: string;
  agentName: string;
  conversation: string;
  message: string;
  def: Trigger;
  /** The agent row's last change: a schedule's catch-up looks no further back than this. */
  since: string;
  cron?: Cron;
  catchUp?: boolean;
  webhook?: string;
  secret?: string;
  watch?: { agentId?: string | undefined; agentName?: string | undefined; types?: readonly string[] | undefined };
}

/** The identity of a trigger within its agent, before duplicates are numbered. */
export function triggerKey(t: Trigger): string {
  if ("schedule" in t) return `schedule:${t.schedule.trim()}${t.timezone ? `@${t.timezone}` : ""}`;
  if ("webhook" in t) return `webhook:${t.webhook}`;
  return `event:${t.event.agent ?? "*"}:${t.event.types && t.event.types.length > 0 ? t.event.types.join(",") : "*"}`;
}

/**
 * Every trigger of every usable agent (all orgs), looked up by agent, by
 * inbound webhook name, and by the agent whose events an event trigger
 * watches. Rebuilt whenever agents change; readers hold one snapshot.
 */
export class TriggerIndex {
  readonly all: readonly IndexedTrigger[];
  private readonly byAgent = new Map<string, IndexedTrigger[]>();
  private readonly byWebhook = new Map<string, IndexedTrigger[]>();
  /** Event triggers by watched agent ID, and (key `org/*`) those that watch every agent of an org. */
  private readonly byWatched = new Map<string, IndexedTrigger[]>();
  private readonly names = new Map<string, string>();

  constructor(rows: readonly AgentRow[]) {
    const ids = new Map<string, string>();
    for (const r of rows) {
      ids.set(`${r.org}/${r.name}`, r.id);
      this.names.set(r.id, r.name);
    }
    const all: IndexedTrigger[] = [];
    for (const row of rows) {
      const def = usableDefinition(row);
      const seen = new Map<string, number>();
      for (const t of def?.triggers ?? []) {
        const base = triggerKey(t);
        const n = (seen.get(base) ?? 0) + 1;
        seen.set(base, n);
        const key = n === 1 ? base : `${base}#${n}`;
        const common = {
          key,
          org: row.org,
          agentId: row.id,
          agentName: row.name,
          conversation: t.conversation ?? `trigger:${key}`,
          message: t.message,
          def: t,
          since: row.updated_at,
        };
        if ("schedule" in t) {
          const cron = compileCron(t.schedule, t.timezone);
          // Saved before catch_up existed: the default.
          if (cron) all.push({ ...common, kind: "schedule", cron, catchUp: t.catch_up !== false });
        } else if ("webhook" in t) {
          all.push({ ...common, kind: "webhook", webhook: t.webhook, secret: t.secret });
        } else {
          const agentId = t.event.agent === undefined ? undefined : ids.get(`${row.org}/${t.event.agent}`);
          all.push({ ...common, kind: "event", watch: { agentId, agentName: t.event.agent, types: t.event.types } });
        }
      }
    }
    this.all = all;
    for (const t of all) {
      push(this.byAgent, t.agentId, t);
      if (t.kind === "webhook") push(this.byWebhook, `${t.org}/${t.webhook}`, t);
      if (t.kind === "event") {
        // A named agent that does not exist (yet) watches nothing until it does (the index is rebuilt then).
        if (t.watch!.agentName === undefined) push(this.byWatched, `${t.org}/*`, t);
        else if (t.watch!.agentId !== undefined) push(this.byWatched, t.watch!.agentId, t);
      }
    }
  }

  get hasEventTriggers(): boolean {
    return this.byWatched.size > 0;
  }

  ofAgent(agentId: string): readonly IndexedTrigger[] {
    return this.byAgent.get(agentId) ?? [];
  }

  webhooks(org: string, name: string): readonly IndexedTrigger[] {
    return this.byWebhook.get(`${org}/${name}`) ?? [];
  }

  schedules(): IndexedTrigger[] {
    return this.all.filter((t) => t.kind === "schedule");
  }

  nameOf(agentId: string): string | undefined {
    return this.names.get(agentId);
  }

  /** The event triggers this event fires: of its org, watching its agent, of a matching type; never the agent's own. */
  watching(e: StoredEvent): IndexedTrigger[] {
    const named = this.byWatched.get(e.agent);
    const any = this.byWatched.get(`${e.org}/*`);
    if (!named && !any) return [];
    return [...(named ?? []), ...(any ?? [])].filter((t) => {
      if (t.agentId === e.agent || t.org !== e.org) return false;
      const types = t.watch!.types;
      return !types || types.length === 0 || types.some((p) => typeMatches(p, e.type));
    });
  }
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function usableDefinition(row: AgentRow): AgentDefinition | undefined {
  if (row.status === "unreadable" || !row.definition) return undefined;
  try {
    return JSON.parse(row.definition) as AgentDefinition;
  } catch {
    return undefined;
  }
}

/** Undefined for an expression croner refuses (the agent file's check refuses it first; this is a saved one). */
function compileCron(expression: string, timezone: string | undefined): Cron | undefined {
  try {
    return new Cron(expression.trim(), { paused: true, mode: "5-or-6-parts", ...(timezone ? { timezone } : {}) });
  } catch {
    return undefined;
  }
}
