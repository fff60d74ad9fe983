/** The stored shapes the store's commands and reads deal in. */
import type { TextEvent } from "./message-text.js";

/** What the agents table stores as status; `running` and `parked` are derived from the turn counters. */
export type AgentBaseStatus = "idle" | "asleep" | "unreadable";
export type AgentStatusValue = "idle" | "running" | "parked" | "queued" | "asleep" | "unreadable";

export interface AgentRow {
  id: string;
  org: string;
  name: string;
  source: "file" | "api";
  definition: string | null;
  format: number;
  file: string | null;
  status: AgentBaseStatus;
  reason: string | null;
  created_at: string;
  updated_at: string;
  event_seq: number;
  message_seq: number;
  running_turns: number;
  parked_turns: number;
  /** The node that holds the agent's lease (drives it), or null when nobody does: it sleeps, or was never woken. */
  owner_node?: string | null;
}

/**
 * What `wardrik ls` shows: unreadable first, then what the open turns say,
 * then `queued` when a turn waits for its org's place (`waiting`, known to the
 * node that drives the agent), then the stored state.
 */
export function agentStatus(row: Pick<AgentRow, "status" | "running_turns" | "parked_turns">, waiting = false): AgentStatusValue {
  if (row.status === "unreadable") return "unreadable";
  if (row.running_turns > 0) return "running";
  if (row.parked_turns > 0) return "parked";
  if (waiting) return "queued";
  return row.status;
}

export interface ConversationRow {
  id: string;
  agent_id: string;
  key: string;
  summary: string | null;
  summary_upto: number;
  created_at: string;
}

export type TurnStatusValue = "running" | "parked" | "completed" | "failed" | "cancelled";

export interface TurnRow {
  id: string;
  agent_id: string;
  conversation_id: string;
  status: TurnStatusValue;
  reason: string | null;
  reason_code: string | null;
  reply: string | null;
  /** Model calls made. */
  iterations: number;
  /** Rounds of tool calls saved. */
  rounds: number;
  /** Rounds whose results were appended to the history. */
  rounds_done: number;
  /** Everything the turn spent; `tool_micros` of it reported by tools, `settled_micros` already in the daily spend. */
  spend_micros: number;
  tool_micros: number;
  settled_micros: number;
  format: number;
  started_at: string;
  ended_at: string | null;
  /** Milliseconds spent parked, waiting for a person: the turn's timeout does not count them. */
  parked_ms: number;
  /** When the turn parked (epoch ms), while it is parked. */
  parked_since_ms: number | null;
  /** The final reply as JSON, for an agent with an `output` schema (it fits). */
  output: string | null;
  /** Replies sent back to the model because they did not fit the `output` schema. */
  repairs: number;
}

export type CallStatus = "planned" | "waiting" | "approved" | "running" | "completed" | "failed" | "denied" | "killed" | "timed_out";

export interface CallRow {
  id: string;
  run: string;
  round: number;
  position: number;
  agent_id: string;
  model_call_id: string;
  tool: string;
  /** The arguments the call runs with (JSON). */
  args: string;
  /** What the model asked for, when a person edited the arguments at approval (JSON); else null. */
  original_args: string | null;
  status: CallStatus;
  read_only: number;
  idempotent: number;
  /** Whether the runtime may run this call again after a crash without asking a person. */
  retry_safe: number;
  idempotency_key: string;
  decision: string | null;
  reason: string | null;
  rule: string | null;
  result: string | null;
  error_code: string | null;
  cost_micros: number;
  attempts: number;
  started_at: string | null;
  ended_at: string | null;
  /** The worker process the call was last sent to (JSON of a WorkerRef), for worker tools; else null. */
  worker: string | null;
}

export interface InputRow {
  id: string;
  text: string;
  /** The `agents/NAME` call that sent the message (the turn taking it is that call's child turn). */
  parentCall?: string | undefined;
  /** That call's trace context (a W3C traceparent), when it was traced: the child turn's trace joins it. */
  callerTrace?: string | undefined;
  /** The message.queued event that holds a large text (see message-text.ts); its history row names it too. */
  textIn?: TextEvent | undefined;
}
