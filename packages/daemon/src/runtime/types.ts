import type { LanguageModelV3 } from "@ai-sdk/provider";
import type { ModelRetry } from "@wardrik/protocol";
import type { AgentDefinition } from "../config/types.js";
import type { DecisionResult } from "../policy/types.js";
import type { ModelPrice } from "./call-model.js";

export interface ResolvedModelRef {
  ref: string;
  model: LanguageModelV3;
  contextWindow?: number | undefined;
  price?: ModelPrice | undefined;
}

export interface CallForDecision {
  agent: AgentDefinition & { id: string; org: string };
  tool: string;
  args: unknown;
  readOnly: boolean;
  idempotent: boolean;
}

/** Budget caps that apply to an agent (policy and agent file). */
export interface BudgetCaps {
  per_turn_usd?: number | undefined;
  per_day_usd?: number | undefined;
}

/**
 * What the runtime asks of its surroundings. Each is a seam later parts fill
 * in: policies decide calls, the model layer resolves refs.
 */

export interface RuntimeHooks {
  resolveModel(ref: string | undefined, agent: AgentDefinition): ResolvedModelRef;
  decide(call: CallForDecision): DecisionResult;
  budget(agent: AgentDefinition): BudgetCaps;
  /** A live text delta of a model reply; not stored. */
  /** `reset`: the model call is retried; text streamed so far will not be kept. */
  onDelta?(agent: DeltaAgent, run: string, text: string, reset?: boolean, retry?: ModelRetry): void;
  /** The model call whose text `onDelta` streamed has ended: `ok` when it replied, false when it failed or was stopped. */
  onDeltaEnd?(agent: DeltaAgent, run: string, ok: boolean): void;
}

/** The agent whose model call streams: its org's secrets are blanked from the deltas. */
export interface DeltaAgent {
  id: string;
  org: string;
}

export { LOST_ANSWER } from "@wardrik/protocol";
