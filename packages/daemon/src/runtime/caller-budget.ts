import { toUsd } from "../store/money.js";
import type { TurnRow } from "../store/rows.js";
import { dayOf } from "../store/spend.js";
import type { AgentDriver } from "./agent-driver.js";
import { readDefinition } from "./agent-admin.js";

/**
 * A child turn (run for an agents/NAME call) spends its caller's budget too.
 * Its spend reaches the caller as the call's cost only when it ends, so while
 * it runs, the caller's caps are checked against what the caller has spent
 * plus what this turn has spent so far (and `extra`, what it is about to):
 * the reason a cap of the calling agent would be passed, or undefined.
 * Only the direct caller is checked here; its own caller sees the whole cost
 * once the call ends.
 */
export async function callerBudgetReason(d: AgentDriver, turn: TurnRow, extra: number): Promise<string | undefined> {
  const parentCall = await parentCallOf(d, turn.id);
  if (parentCall === null) return undefined;
  const call = await d.store.calls.get(parentCall);
  const caller = call ? await d.store.agents.get(call.agent_id) : undefined;
  if (!call || !caller) return undefined;
  let caps;
  try {
    caps = d.hooks.budget(readDefinition(caller));
  } catch {
    return undefined;
  }
  if (caps.per_day_usd === undefined && caps.per_turn_usd === undefined) return undefined;
  const mine = toUsd((await d.store.turns.get(turn.id))?.spend_micros ?? 0) + extra;
  if (caps.per_turn_usd !== undefined) {
    const theirs = toUsd((await d.store.turns.get(call.run))?.spend_micros ?? 0);
    if (theirs + mine > caps.per_turn_usd)
      return `The calling agent ${caller.name}'s turn budget of $${caps.per_turn_usd} would be passed (its turn spent $${theirs.toFixed(4)}, this one $${mine.toFixed(4)}).`;
  }
  if (caps.per_day_usd !== undefined) {
    const spent = await d.store.spend.on(caller.id, dayOf(d.store.clock.now()));
    const day = toUsd(spent.model_micros + spent.tools_micros);
    if (day + mine > caps.per_day_usd)
      return `The calling agent ${caller.name}'s daily budget of $${caps.per_day_usd} would be passed (it spent $${day.toFixed(4)} today, this turn $${mine.toFixed(4)}).`;
  }
  return undefined;
}

/** The agents/NAME call turn `run` runs for, or null (not a child turn): read once per turn, then remembered while it is open. */
export async function parentCallOf(d: AgentDriver, run: string): Promise<string | null> {
  const known = d.progress.parentCall(run);
  if (known !== undefined) return known;
  const found = (await d.store.inputs.parentCallOf(run)) ?? null;
  d.progress.rememberParentCall(run, found);
  return found;
}
