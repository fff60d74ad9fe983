/**
 * The event types of the durable record. Naming rule: `noun.verb_past`
 * (`call.completed`). Names in a durable log last forever: add, never rename.
 */
export const EVENT_TYPES = [
  "agent.loaded",
  "agent.updated",
  "agent.removed",
  "agent.unreadable",
  "agent.asleep",
  "agent.awake",
  "message.queued",
  "messages.dropped",
  "turn.started",
  "turn.completed",
  "turn.failed",
  "turn.cancelled",
  "turn.parked",
  "turn.resumed",
  "model.called",
  "model.replied",
  "model.failed",
  "round.saved",
  "call.decided",
  "call.started",
  "call.completed",
  "call.failed",
  "call.killed",
  "call.cost_reported",
  "approval.requested",
  "approval.granted",
  "approval.denied",
  "budget.exceeded",
  "conversation.compacted",
  "conversation.cleared",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
export const EVENT_TYPE_PREFIX = "dev.wardrik.";

/** A CloudEvents 1.0 JSON envelope, with Wardrik's extension attributes. */
export interface WardrikCloudEvent<D = Record<string, unknown>> {
  specversion: "1.0";
  id: string;
  source: string;
  type: string;
  time: string;
  subject?: string;
  datacontenttype: "application/json";
  /** Position in the agent's ordered log (extension attribute). */
  seq: number;
  /** The turn's ID, where the event belongs to a turn (extension attribute). */
  run?: string;
  data: D;
}

/** Event types that end a turn. */
export const TURN_END_TYPES: readonly string[] = ["turn.completed", "turn.failed", "turn.cancelled"];

export function shortType(type: string): string {
  return type.startsWith(EVENT_TYPE_PREFIX) ? type.slice(EVENT_TYPE_PREFIX.length) : type;
}
