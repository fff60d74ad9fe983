import { typeMatches } from "@wardrik/protocol";
import type { SubscriberEntry } from "../config/types.js";
import { postTarget, type PostTarget } from "./http-post.js";
import { signingKey } from "./signatures.js";

/** A config.yaml subscriber, ready to match events and sign deliveries. */
export interface Subscriber {
  /** Its identity in the outbox: the URL, with `#2`, `#3` for a URL listed again. */
  key: string;
  url: string;
  /** The URL parsed once for node:http. */
  target: PostTarget;
  types: readonly string[] | undefined;
  agents: ReadonlySet<string> | undefined;
  /** The Standard Webhooks key; unsigned deliveries without one. */
  signingKey: Buffer | undefined;
  retryForMs: number;
  timeoutMs: number;
  /** Whether `types` takes an event type, worked out once per type (a turn writes a dozen events). */
  takes: Map<string, boolean>;
}

export function compileSubscribers(entries: readonly SubscriberEntry[]): Subscriber[] {
  const seen = new Map<string, number>();
  return entries.map((s) => {
    const n = (seen.get(s.url) ?? 0) + 1;
    seen.set(s.url, n);
    return {
      key: n === 1 ? s.url : `${s.url}#${n}`,
      url: s.url,
      target: postTarget(s.url),
      types: s.types && s.types.length > 0 ? s.types : undefined,
      agents: s.agents && s.agents.length > 0 ? new Set(s.agents) : undefined,
      signingKey: s.secret === undefined ? undefined : signingKey(s.secret),
      retryForMs: s.retry_for * 1000,
      timeoutMs: s.timeout * 1000,
      takes: new Map(),
    };
  });
}

/** Whether the subscriber wants an event of this type (full or short) from the agent named `agentName`. */
export function wants(s: Subscriber, type: string, agentName: () => string | undefined): boolean {
  if (s.types) {
    let takes = s.takes.get(type);
    if (takes === undefined) s.takes.set(type, (takes = s.types.some((p) => typeMatches(p, type))));
    if (!takes) return false;
  }
  if (s.agents) {
    const name = agentName();
    if (name === undefined || !s.agents.has(name)) return false;
  }
  return true;
}
