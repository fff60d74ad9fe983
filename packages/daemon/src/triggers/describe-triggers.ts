import type { TriggerView } from "@wardrik/protocol";
import type { FiringRow } from "../store/trigger-firings.js";
import type { IndexedTrigger } from "./trigger-index.js";

/** An agent's triggers as `agent show` and `GET /v1/agents/{id}` show them (never a webhook's secret). */
export function describeTriggers(
  triggers: readonly IndexedTrigger[],
  latest: readonly FiringRow[],
  nextRun: (t: IndexedTrigger) => string | undefined,
): TriggerView[] {
  const last = new Map(latest.map((f) => [f.trigger_key, f]));
  return triggers.map((t) => {
    const fired = last.get(t.key);
    const view: TriggerView = { kind: t.kind, key: t.key, conversation: t.conversation, message: t.message };
    if (t.def && "schedule" in t.def) {
      view.schedule = t.def.schedule;
      if (t.def.timezone) view.timezone = t.def.timezone;
      view.catch_up = t.catchUp ?? true;
      const next = nextRun(t);
      if (next) view.next_run = next;
    } else if (t.kind === "webhook") {
      view.webhook = t.webhook!;
      view.path = `/v1/hooks/${encodeURIComponent(t.org)}/${encodeURIComponent(t.webhook!)}`;
    } else {
      view.event = {
        ...(t.watch?.agentName ? { agent: t.watch.agentName } : {}),
        ...(t.watch?.types && t.watch.types.length > 0 ? { types: [...t.watch.types] } : {}),
      };
    }
    if (fired) {
      view.last_fired = fired.queued_at ?? fired.created_at;
      if (fired.message_id) view.last_message = fired.message_id;
    }
    return view;
  });
}
