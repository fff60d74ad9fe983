/**
 * The event types of the durable record and the data each one carries.
 * Naming rule: `noun.verb_past` (`call.completed`). Names and fields in a
 * durable log last forever: add types and optional fields, never rename.
 */
import type { FailureCode } from "./failure-codes.js";

/** Where a waiting call came from: a policy rule, or an answer lost in a crash. */
interface CallRef {
  call: string;
  tool: string;
}

/** Every failure on the record says what kind it is and whether trying again can help. */
export interface Failure {
  code: FailureCode;
  retryable: boolean;
}

export interface EventDataMap {
  "agent.loaded": { name: string; file?: string; source?: "file" | "api"; definition?: unknown };
  "agent.updated": { name: string; file?: string; definition?: unknown };
  "agent.removed": { name: string };
  /** `file` is set when the agent file is at fault, absent when its saved state is. */
  "agent.unreadable": { name?: string; file?: string; reason: string };
  "agent.asleep": { idle_seconds: number };
  "agent.awake": Record<string, never>;
  "message.queued": { message: string; conversation: string; conversation_id: string; text: string };
  "messages.dropped": { count: number; conversation?: string };
  /** `parent`: the turn is a child turn, run for the `agents/NAME` call `call` of agent `agent`'s turn `run`. */
  "turn.started": {
    conversation: string;
    conversation_id: string;
    messages: string[];
    parent?: { agent: string; run: string; call: string };
  };
  /** `output`: the reply as JSON, when the agent declares an `output` schema (the reply fits it). */
  "turn.completed": { conversation_id: string; reply: string; output?: unknown; iterations: number; spend_usd: number };
  "turn.failed": { conversation_id: string; reason: string; iterations: number; spend_usd: number } & Failure;
  "turn.cancelled": { conversation_id: string; reason: string; iterations: number; spend_usd: number } & Failure;
  "turn.parked": { round: number; waiting: string[] };
  "turn.resumed": Record<string, never>;
  "model.called": { model?: string | undefined; iteration: number };
  "model.replied": {
    model: string;
    iteration: number;
    messages: number;
    input_tokens: number;
    output_tokens: number;
    cached_tokens: number;
    cost_usd: number;
    finish_reason: string;
    text: string;
    tool_calls: number;
  };
  "model.failed": { error: string } & Failure;
  /**
   * The model `from` failed (after its retries) with an error that was not the request's fault
   * (5xx, overload, timeout, network, rate limit, refused credentials): `to`, the next of the agent's models, is tried.
   * `status`: the provider's HTTP status, when it gave one.
   */
  "model.fell_back": { from: string; to: string; iteration: number; error: string; status?: number } & Failure;
  /** A final reply that does not fit the agent's `output` schema: the model is asked to repair it while `repairs_left` > 0. */
  "output.rejected": { iteration: number; problems: string[]; repairs_left: number };
  "round.saved": { round: number; calls: { call: string; tool: string; args: unknown; read_only: boolean; idempotent: boolean }[] };
  /** A deny is a failure of the call (code `denied`); allow and ask are not. */
  "call.decided": CallRef & { reason: string; rule: string | null } & ({ decision: "allow" | "ask" } | ({ decision: "deny" } & Failure));
  /**
   * A policy's judge model decided the call (recorded before its call.decided).
   * `error` is set when the judge's answer could not be used; `verdict` is then the rule's on_error.
   */
  "call.judged": CallRef & {
    verdict: "allow" | "ask" | "deny";
    reason: string;
    model: string;
    rule: string | null;
    input_tokens: number;
    output_tokens: number;
    cost_usd: number;
    error?: string;
  };
  /**
   * `child`: an `agents/NAME` call's child turn, agent NAME's turn `run` (the same on every attempt; its
   * turn.started names this call back).
   */
  "call.started": CallRef & { attempt: number; idempotency_key: string; child?: { agent: string; run: string } };
  /** `late`: the call had been recorded failed for lack of a worker; a worker that had run it answered after all. */
  "call.completed": CallRef & { output: unknown; cost_usd: number; attempt?: number; late?: true };
  "call.failed": CallRef & { error: string; cost_usd: number } & Failure;
  "call.killed": CallRef & { error: string; cost_usd?: number } & Failure;
  "call.timed_out": CallRef & { error: string; attempt: number; timeout_s: number; will_retry: boolean; cost_usd: number } & Failure;
  "call.retried": CallRef & { attempt: number; reason: string } & Failure;
  "call.cost_reported": CallRef & { cost_usd: number };
  /**
   * `lost`: the call's answer was lost in a crash (code `lost`), not asked for by a policy rule;
   * `worker` is the worker process it was last sent to, when the record knows it.
   */
  "approval.requested": CallRef & { args: unknown; reason: string; rule: string | null } & (
      { lost?: false } | ({ lost: true; worker?: { name: string; instance: string; node?: string } } & Failure)
    );
  /**
   * With `args` (what the call runs with) and `original_args` (what the model asked for) when a person edited them.
   * `by`: who decided: `token:NAME` (the bearer token's name: the CLI, the console, the API) or `slack:USER_ID`.
   */
  "approval.granted": CallRef & { args?: unknown; original_args?: unknown; by?: string };
  "approval.denied": CallRef & { reason: string; by?: string } & Failure;
  /** A person/ask call parks its turn with a question for a person; with `choices`, the answer must be one of them. */
  "question.asked": CallRef & { question: string; choices?: string[] };
  /** A person answered a question; `by` as for approvals (`token:NAME`, `slack:USER_ID`). The answer is the call's output. */
  "question.answered": CallRef & { answer: string; by?: string };
  "budget.exceeded": { reason: string; refused: string; per_turn_usd?: number | undefined; per_day_usd?: number | undefined } & Failure;
  "conversation.compacted": {
    conversation_id: string;
    folded_messages: number;
    from_seq: number;
    upto_seq: number;
    kept_messages: number;
    tokens_before: number;
    context_window: number;
    summary: string;
    model: string;
    input_tokens: number;
    output_tokens: number;
    cost_usd: number;
  };
  "conversation.cleared": { conversation: string; conversation_id: string };
  /**
   * A new conversation made from another's history as it stood at event `at_seq`
   * (`wardrik fork`): every turn of it that had ended by then. `open_run` is a turn
   * that was still running at that point, left out; the original is not changed.
   */
  "conversation.forked": {
    conversation: string;
    conversation_id: string;
    from: string;
    from_conversation_id: string;
    at_seq: number;
    messages: number;
    turns: number;
    open_run?: string;
  };
}

export type EventType = keyof EventDataMap;

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
  "model.fell_back",
  "output.rejected",
  "round.saved",
  "call.decided",
  "call.judged",
  "call.started",
  "call.completed",
  "call.failed",
  "call.killed",
  "call.timed_out",
  "call.retried",
  "call.cost_reported",
  "approval.requested",
  "approval.granted",
  "approval.denied",
  "question.asked",
  "question.answered",
  "budget.exceeded",
  "conversation.compacted",
  "conversation.cleared",
  "conversation.forked",
] as const satisfies readonly EventType[];

// Every key of the map is listed above, and nothing else: a compile error names the one missing.
type Missing = Exclude<EventType, (typeof EVENT_TYPES)[number]>;
const _allListed: Missing extends never ? true : Missing = true;
void _allListed;

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

/** An event whose `type` (short form) selects its data type. */
export type TypedEvent<T extends EventType = EventType> = {
  [K in T]: Omit<WardrikCloudEvent<EventDataMap[K]>, "type"> & { type: `${typeof EVENT_TYPE_PREFIX}${K}` };
}[T];

/** Narrows a received event to one type, giving its data its type. */
export function isEventOf<T extends EventType>(event: WardrikCloudEvent<unknown>, type: T): event is WardrikCloudEvent<EventDataMap[T]> {
  return event.type === EVENT_TYPE_PREFIX + type;
}

/** An event with its short type (`call.decided`); a switch on `type` gives `data` its type. */
export type ShortTypedEvent = {
  [K in EventType]: Omit<WardrikCloudEvent<EventDataMap[K]>, "type"> & { type: K };
}[EventType];

/**
 * A received event as the map types it, or undefined for a type this version
 * does not know (a newer daemon may send one). The data is trusted to match:
 * the daemon writes every event through the same map.
 */
export function typedEvent(event: WardrikCloudEvent<unknown>): ShortTypedEvent | undefined {
  const type = shortType(event.type);
  if (!(EVENT_TYPES as readonly string[]).includes(type)) return undefined;
  return { ...event, type } as ShortTypedEvent;
}

/** Event types that end a turn. */
export const TURN_END_TYPES: readonly EventType[] = ["turn.completed", "turn.failed", "turn.cancelled"];

export function shortType(type: string): string {
  return type.startsWith(EVENT_TYPE_PREFIX) ? type.slice(EVENT_TYPE_PREFIX.length) : type;
}

/**
 * Whether an event type matches a pattern: an exact type (short or full),
 * `*` for all, or a prefix wildcard such as `call.*`.
 */
export function typeMatches(pattern: string, type: string): boolean {
  const p = shortType(pattern.trim());
  const t = shortType(type);
  if (p === "*" || p === t) return true;
  return p.endsWith(".*") && t.startsWith(p.slice(0, -1));
}
