import { compileToolPattern } from "../policy/match-tool.js";
import type { NewCall } from "../store/calls.js";
import type { CallRow, TurnRow } from "../store/rows.js";
import type { ResolvedTool } from "../tools/tool-registry.js";
import type { AgentDriver } from "./agent-driver.js";
import { budgetReason } from "./budget.js";
import { decidePlanned } from "./call-moves.js";
import { StaleTurn } from "./engine-options.js";
import { availableToolsText, decide } from "./plan-round.js";
import { toolPatternsOf } from "../config/types.js";

/**
 * A call saved undecided (rounds saved by state format 1) is decided when
 * its turn resumes, against the policy and tools as they are now. Returns
 * what it became.
 */
export async function decideSavedCall(
  d: AgentDriver,
  turn: TurnRow,
  call: CallRow,
  args: unknown,
  tool: ResolvedTool | undefined,
): Promise<NewCall["status"] | "approved" | "stale"> {
  const c: NewCall = {
    id: call.id,
    modelCallId: call.model_call_id,
    tool: call.tool,
    args,
    readOnly: call.read_only === 1,
    idempotent: call.idempotent === 1,
    retrySafe: call.retry_safe === 1,
    status: "running",
    decision: null,
    reason: null,
    rule: null,
  };
  const usable = tool !== undefined && toolPatternsOf(d.def).some((p) => compileToolPattern(p)(call.tool));
  if (!usable) {
    const tools = await d.tools.resolve(toolPatternsOf(d.def), { org: d.org, agentId: d.id });
    Object.assign(c, { status: "failed", result: `Unknown tool ${call.tool}. ${availableToolsText(tools)}`, errorCode: "unknown_tool" });
  } else {
    const over = await budgetReason(d, turn, d.hooks.budget(d.def), 0);
    if (over) Object.assign(c, { status: "denied", decision: "deny", reason: over, result: `Refused: ${over}`, errorCode: "budget" });
    else decide(d, c);
  }
  const moved = await d.store.tx(async (w) => {
    if ((await d.store.turns.lock(w, turn.id)) !== "running") throw new StaleTurn(`turn ${turn.id} is no longer running`);
    return decidePlanned(w, d.store, d.ref, turn.id, c);
  }, d.org);
  if (!moved) return "stale";
  return c.status === "running" ? "approved" : c.status;
}
