import { resolveReferences, type ReferenceSources } from "./references.js";
import type { Trigger } from "./trigger-schema.js";
import type { Source } from "./yaml-source.js";

/**
 * What the trigger schema cannot see alone: an event trigger on the agent's
 * own events (each firing would fire it again), a webhook name used twice by
 * one agent, and a webhook secret that refers to a secret or variable that
 * is not set. Each is an error at the trigger's line, like any other key.
 */
export function checkTriggers(agent: string, triggers: readonly Trigger[], src: Source, references?: ReferenceSources): void {
  const webhooks = new Map<string, number>();
  triggers.forEach((t, i) => {
    if ("event" in t && t.event.agent === agent) {
      src.fail(
        ["triggers", i, "event", "agent"],
        `triggers[${i}].event.agent names this agent: an event trigger cannot watch the agent's own events (every message it queues is an event that would fire it again); name another agent`,
      );
    }
    if ("webhook" in t) {
      const first = webhooks.get(t.webhook);
      if (first !== undefined)
        src.fail(
          ["triggers", i, "webhook"],
          `triggers[${i}].webhook: webhook ${t.webhook} is already triggers[${first}]; give each webhook its own name`,
        );
      webhooks.set(t.webhook, i);
      if (references) {
        // Only this value, at its own path, so an error names triggers[i].secret and its line.
        const holder: unknown[] = [];
        holder[i] = { secret: t.secret };
        resolveReferences(src.withValue({ triggers: holder }), references);
      }
    }
  });
}
