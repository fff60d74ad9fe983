import type { ReplayTurn } from "@wardrik/protocol";
import { toUsd } from "../store/money.js";
import { canonicalJson, type CallRecord, type ServedCall } from "../tools/recorded-toolset.js";
import type { DrivenTurn } from "./drive-scratch-turn.js";
import { readCall } from "./recorded-calls.js";
import type { PlannedTurn } from "./replay-plan.js";
import type { ScratchAgent } from "./scratch-agent.js";

/**
 * One replayed turn beside the original: its reply, calls (each with where
 * its answer came from) and cost, and whether it diverged: it called other
 * tools or arguments than the original did, a call was refused on one side
 * and not the other, or a call found no answer in the record.
 */
export async function reportTurn(
  scratch: ScratchAgent,
  planned: PlannedTurn,
  driven: DrivenTurn,
  served: ReadonlyMap<string, ServedCall>,
  record: CallRecord,
): Promise<ReplayTurn> {
  const row = await scratch.store.turns.get(driven.run);
  const calls = (await scratch.store.calls.ofTurn(driven.run)).map((c) => {
    const read = readCall(c);
    const how = served.get(c.id);
    return { ...read, source: how?.source ?? ("none" as const), matched: how?.matched ?? record.has(c.tool, read.args) };
  });
  const asked = driven.wouldAsk.map((w) => `${w.tool} (${w.reason})`).join(", ");
  const replay = {
    status: driven.wouldAsk.length > 0 ? "would_ask" : (row?.status ?? "failed"),
    ...(row?.reply != null ? { reply: row.reply } : {}),
    ...(driven.wouldAsk.length > 0
      ? {
          reason: `Stopped where a person would be asked: ${asked}. The record holds no decision for this call, so the replay does not make one.`,
        }
      : row?.reason
        ? { reason: row.reason }
        : {}),
    iterations: row?.iterations ?? 0,
    cost_usd: toUsd(row?.spend_micros ?? 0),
    calls,
  };
  // A call refused where the original ran (or ran where the original was refused) is another call.
  const key = (c: { tool: string; args: unknown; status: string }) =>
    `${c.tool} ${canonicalJson(c.args)}${c.status === "denied" ? " denied" : ""}`;
  const sameCalls = planned.original !== undefined && planned.original.calls.map(key).join("\n") === calls.map(key).join("\n");
  const unanswered = calls.some((c) => c.source === "missing" || c.source === "live");
  return {
    turn: planned.turn,
    ...(planned.run ? { run: planned.run } : {}),
    messages: planned.messages,
    ...(planned.original ? { original: planned.original } : {}),
    replay,
    diverged: unanswered || (planned.original !== undefined && !sameCalls),
  };
}
