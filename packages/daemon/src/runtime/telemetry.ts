import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import type { NewCall } from "../store/calls.js";
import type { Writer } from "../store/store.js";
import type { ToolOutcome } from "../tools/toolset.js";
import type { ModelReply } from "./call-model.js";

/**
 * What the engine tells an observer (traces) about its work: one interface
 * with a no-op default, called from the few places where a turn runs, a
 * model is called, a tool runs and calls are decided. The engine does not
 * know whether anything listens; the daemon passes an implementation when
 * tracing is configured (telemetry/), and the default costs a function call.
 *
 * Work is reported as it starts and as it ends (not wrapped in a callback):
 * the engine awaits the work itself, so an observer adds no promise and no
 * closure to a model or tool call. The engine ends everything it started
 * exactly once, work that threw included (with the error); an implementation
 * must not throw from these calls, since they run around the engine's work.
 */
export interface Telemetry {
  /**
   * A turn is being started in `w`'s transaction: returns the trace context
   * (a W3C traceparent) to store with the turn in that same commit, so every
   * later stretch of the turn (after a park, a crash, on another node) joins
   * the same trace; undefined when nothing is traced.
   */
  turnStarting(w: Writer, turn: TurnTelemetry): string | undefined;
  /** One stretch of a turn: from its start or resumption until it ends, parks or stops. */
  inTurn<T>(turn: TurnTelemetry, fn: () => Promise<T>): Promise<T>;
  /** One model call of a turn (with its retries) starts; what this returns goes to `modelCallEnded`. */
  modelCallStarted(call: ModelCallTelemetry): Started | undefined;
  /** It ended, with `reply` or failing with `error`. */
  modelCallEnded(started: Started | undefined, reply: ModelReply | undefined, error?: unknown): void;
  /** One attempt of a tool call starts; `traceparent` of what this returns is the trace context to hand the tool. */
  toolCallStarted(call: ToolCallTelemetry): Started | undefined;
  /** It ended, with `outcome` or failing with `error`. */
  toolCallEnded(started: Started | undefined, outcome: ToolOutcome | undefined, error?: unknown): void;
  /** A model reply's calls were decided and saved; those that will not run now (denied, invalid, waiting) end here. */
  callsPlanned(turn: TurnTelemetry, calls: readonly NewCall[]): void;
}

/** Work an observer is following, as the engine sees it. */
export interface Started {
  /** The W3C trace context of the work, for the tool it calls; undefined when not traced. */
  readonly traceparent: string | undefined;
}

/** The turn a piece of work belongs to. */
export interface TurnTelemetry {
  run: string;
  agentId: string;
  agentName: string;
  agentDescription: string;
  org: string;
  conversationId: string;
  /** A child turn's: the agents/NAME call it runs for. */
  parentCall?: string | undefined;
  /** A child turn's, when its call was traced: that call's span (a W3C traceparent), the parent of the turn's root span. */
  callerTrace?: string | undefined;
}

export interface ModelCallTelemetry extends TurnTelemetry {
  /** The model as the agent names it (`openai/gpt-4o`, a config.yaml name). */
  ref: string;
  /** The provider's own name for it (the AI SDK's `provider`, e.g. `openai.chat`). */
  provider: string;
  modelId: string;
  iteration: number;
  /** What is sent; read only when message content is captured. */
  content: () => { instructions: string; prompt: LanguageModelV3Prompt };
}

export interface ToolCallTelemetry extends TurnTelemetry {
  callId: string;
  /** `namespace/tool`. */
  tool: string;
  description: string;
  /** The policy's decision as saved with the call (allow, ask, deny), null for a call saved undecided. */
  decision: string | null;
  attempt: number;
  args: unknown;
}

/** Telemetry that records nothing: the engine's default. */
export const noTelemetry: Telemetry = {
  turnStarting: () => undefined,
  inTurn: (_turn, fn) => fn(),
  modelCallStarted: () => undefined,
  modelCallEnded: () => undefined,
  toolCallStarted: () => undefined,
  toolCallEnded: () => undefined,
  callsPlanned: () => undefined,
};

/** The telemetry view of a driver's turn. */
export function turnTelemetry(
  d: { id: string; org: string; def: { name: string; description: string } },
  turn: { id: string; conversation_id: string },
): TurnTelemetry {
  return {
    run: turn.id,
    agentId: d.id,
    agentName: d.def.name,
    agentDescription: d.def.description,
    org: d.org,
    conversationId: turn.conversation_id,
  };
}

/** The telemetry view of one attempt of a saved call. */
export function toolTelemetry(
  d: { id: string; org: string; def: { name: string; description: string } },
  turn: { id: string; conversation_id: string },
  call: { id: string; tool: string; decision: string | null },
  tool: { description: string },
  args: unknown,
  attempt: number,
): ToolCallTelemetry {
  // One literal, not a spread of turnTelemetry's: this runs for every attempt of every call.
  return {
    run: turn.id,
    agentId: d.id,
    agentName: d.def.name,
    agentDescription: d.def.description,
    org: d.org,
    conversationId: turn.conversation_id,
    callId: call.id,
    tool: call.tool,
    description: tool.description,
    decision: call.decision,
    attempt,
    args,
  };
}

/** The telemetry view of one model call of a turn (also the turn's, for the calls it plans). */
export function modelCallTelemetry(
  d: { id: string; org: string; def: { name: string; description: string } },
  turn: { id: string; conversation_id: string },
  model: { ref: string; provider: string; modelId: string },
  iteration: number,
  content: ModelCallTelemetry["content"],
): ModelCallTelemetry {
  return {
    run: turn.id,
    agentId: d.id,
    agentName: d.def.name,
    agentDescription: d.def.description,
    org: d.org,
    conversationId: turn.conversation_id,
    ref: model.ref,
    provider: model.provider,
    modelId: model.modelId,
    iteration,
    content,
  };
}
