import type { DeliveryView } from "@wardrik/protocol";
import type { AttemptRow, DeliveryRow } from "../store/deliveries.js";

/** A delivery row and its attempts as the API shows them; the subscriber key's `#N` suffix is not part of its URL. */
export function describeDelivery(row: DeliveryRow, attempts: readonly AttemptRow[]): DeliveryView {
  return {
    id: row.id,
    subscriber: row.subscriber.replace(/#\d+$/, ""),
    agent: row.agent_id,
    event: row.event_id,
    event_type: row.event_type,
    seq: row.event_seq,
    status: row.status,
    attempts: row.attempts,
    ...(row.status === "pending" ? { next_attempt_at: new Date(row.next_at).toISOString() } : {}),
    created_at: row.created_at,
    ...(row.ended_at ? { ended_at: row.ended_at } : {}),
    ...(row.last_error ? { last_error: row.last_error } : {}),
    ...(Number(row.possible_repeats) > 0 ? { possible_repeats: Number(row.possible_repeats) } : {}),
    attempt_log: attempts.map((a) => ({
      attempt: a.attempt,
      started_at: a.started_at,
      duration_ms: a.duration_ms,
      ...(a.http_status !== null ? { status: a.http_status } : {}),
      ...(a.error ? { error: a.error } : {}),
    })),
  };
}
