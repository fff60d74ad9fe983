import { isRetryableFailure } from "@wardrik/protocol";
import { dayOf } from "../store/spend.js";
import { toUsd } from "../store/money.js";
import type { TurnRow } from "../store/rows.js";
import type { AgentDriver } from "./agent-driver.js";
import { StaleTurn } from "./engine-options.js";
import { endedIn } from "./turn-bookkeeping.js";
import { endTurn } from "./turn-moves.js";
import type { BudgetCaps } from "./types.js";
import { callerBudgetReason } from "./caller-budget.js";

/**
 * Why spending `extra` more dollars would pass a cap, or undefined when it
 * fits. The day's spend is what finished turns settled plus what open turns
 * have spent so far.
 */
export async function budgetReason(d: AgentDriver, turn: TurnRow, caps: BudgetCaps, extra: number): Promise<string | undefined> {
  return (await ownBudgetReason(d, turn, caps, extra)) ?? (await callerBudgetReason(d, turn, extra));
}

async function ownBudgetReason(d: AgentDriver, turn: TurnRow, caps: BudgetCaps, extra: number): Promise<string | undefined> {
  if (caps.per_day_usd === undefined && caps.per_turn_usd === undefined) return undefined;
  const spent = await d.store.spend.on(d.id, dayOf(d.store.clock.now()));
  const day = toUsd(spent.model_micros + spent.tools_micros);
  const turnSpend = toUsd((await d.store.turns.get(turn.id))?.spend_micros ?? 0);
  if (caps.per_day_usd !== undefined && (day >= caps.per_day_usd || day + extra > caps.per_day_usd)) {
    return `The agent's daily budget of $${caps.per_day_usd} would be passed (spent $${day.toFixed(4)} today${andStep(extra)}).`;
  }
  if (caps.per_turn_usd !== undefined && (turnSpend >= caps.per_turn_usd || turnSpend + extra > caps.per_turn_usd)) {
    return `The turn's budget of $${caps.per_turn_usd} would be passed (spent $${turnSpend.toFixed(4)} in this turn${andStep(extra)}).`;
  }
  return undefined;
}

/** What the step being judged adds, said beside what is spent: a reply that alone passes a cap is not "spent $0.0000". */
function andStep(extra: number): string {
  return extra > 0 ? `, $${extra.toFixed(4)} more with this step` : "";
}

/** What a budget.exceeded event says about itself as a failure: a cap that waiting does not lift. */
export const BUDGET_FAILURE = { code: "budget", retryable: isRetryableFailure("budget") } as const;

/** Ends the turn with a budget.exceeded event. */
export async function stopForBudget(d: AgentDriver, turn: TurnRow, caps: BudgetCaps, reason: string, what: string): Promise<void> {
  await d.store.tx(async (w) => {
    w.emit(d.ref, "budget.exceeded", { reason, refused: what, ...caps, ...BUDGET_FAILURE }, { run: turn.id });
    if (!(await endTurn(w, d.store, d.ref, turn, "running", "fail", { reason, code: "budget" })))
      throw new StaleTurn(`turn ${turn.id} is no longer running`);
    endedIn(d, w, turn);
  });
}

/** The caps that apply to an agent: its policy's (per turn, per day) and its own daily `budget`, the lower of the two per day. */
export function budgetCaps(policyBudget: BudgetCaps | undefined, agentBudget: number | undefined): BudgetCaps {
  const perDay = [policyBudget?.per_day_usd, agentBudget].filter((x): x is number => x !== undefined);
  return { per_turn_usd: policyBudget?.per_turn_usd, per_day_usd: perDay.length > 0 ? Math.min(...perDay) : undefined };
}

/** A rough token count of a model call's input: its messages and tool definitions (4 characters a token), for budget estimates before a call. */
export function estimateTokens(prompt: unknown[]): number {
  let chars = 0;
  for (const m of prompt) chars += JSON.stringify(m).length;
  return Math.ceil(chars / 4);
}
