import type { JudgeVerdict, ReplayReport, ReplayTurn } from "@wardrik/protocol";
import { dayOf } from "../store/spend.js";
import type { AgentRow } from "../store/store.js";
import { RecordedToolset, type CallRecord, type ServedCall } from "../tools/recorded-toolset.js";
import { ToolRegistry } from "../tools/tool-registry.js";
import { driveScratchTurn } from "./drive-scratch-turn.js";
import { judgeReply } from "./judge-reply.js";
import { planReplay } from "./replay-plan.js";
import { replaySettings, type ReplayDeps, type ReplayInput } from "./replay-settings.js";
import { reportTurn } from "./report-turn.js";
import { ScratchAgent } from "./scratch-agent.js";

export type { ReplayDeps, ReplayInput } from "./replay-settings.js";

/** Beyond the turn's own timeout, how long a replayed turn may take before the replay gives up on it. */
const DEADLINE_SLACK_MS = 30_000;

/**
 * Runs recorded turns again (or one new message) with other settings, in a
 * scratch copy of the agent: a temporary SQLite database holding the agent
 * and its conversation's history before the first replayed turn, driven by a
 * Runtime of its own under the chosen policy and budgets. Every tool answer
 * comes from the record (or the case's scripted results); a tool runs for
 * real only when `live` names it. Nothing is written to the daemon's store:
 * the copy has its own database and event bus, and the daemon's tools are
 * reachable only through the live names.
 */
export async function runReplay(deps: ReplayDeps, agent: AgentRow, input: ReplayInput): Promise<ReplayReport> {
  const settings = replaySettings(deps, agent, input);
  const plan = await planReplay(deps.store, agent, input);
  const live = input.live ?? [];
  const served = new Map<string, ServedCall>();
  const scratch = await ScratchAgent.open({
    agent,
    definition: settings.definition,
    conversation: plan.conversation,
    history: plan.history,
    spentToday: await deps.store.spend.on(agent.id, dayOf(deps.clock.now())),
    hooks: settings.hooks,
    tools: replayTools(deps, plan.record, live, served),
    toolTimeoutMs: deps.toolTimeoutMs,
    clock: deps.clock,
    log: deps.log,
    ...(deps.redact ? { redact: deps.redact } : {}),
  });
  try {
    const turns: ReplayTurn[] = [];
    const deadlineMs = settings.definition.timeout * 1000 + DEADLINE_SLACK_MS;
    for (const planned of plan.turns) {
      plan.record.turn = planned.turn;
      const driven = await driveScratchTurn(scratch, planned.messages, plan.decided, deadlineMs);
      turns.push(await reportTurn(scratch, planned, driven, served, plan.record));
    }
    const judged = input.judge
      ? await judge(
          settings.hooks.resolveModel(input.judge.model ?? settings.modelRef, settings.definition),
          input.judge.criteria,
          turns.at(-1),
        )
      : undefined;
    const cost = turns.reduce((n, t) => n + t.replay.cost_usd, 0) + (judged ?? []).reduce((n, j) => n + j.cost_usd, 0);
    return {
      agent: agent.name,
      ...(plan.recorded ? { conversation: plan.conversation } : {}),
      model: settings.modelRef,
      policy: settings.policyName,
      live,
      turns,
      cost_usd: cost,
      ...(judged ? { judged } : {}),
    };
  } finally {
    await scratch.close();
  }
}

/**
 * The copy's tools: one RecordedToolset per namespace the daemon serves or
 * the record names. The daemon's own toolsets stay behind them, reached
 * only for listing and for calls the live names allow.
 */
function replayTools(deps: ReplayDeps, record: CallRecord, live: readonly string[], served: Map<string, ServedCall>): ToolRegistry {
  const namespaces = new Set(deps.registry.namespaces());
  for (const c of record.calls) namespaces.add(c.tool.slice(0, Math.max(0, c.tool.indexOf("/"))));
  namespaces.delete("");
  const registry = new ToolRegistry();
  for (const ns of namespaces) {
    registry.add(new RecordedToolset(ns, record, { real: deps.registry.get(ns), live, onServed: (id, how) => served.set(id, how) }));
  }
  return registry;
}

async function judge(
  model: Parameters<typeof judgeReply>[0],
  criteria: readonly string[],
  last: ReplayTurn | undefined,
): Promise<JudgeVerdict[]> {
  const signal = AbortSignal.timeout(120_000);
  const out: JudgeVerdict[] = [];
  for (const criterion of criteria) {
    out.push(await judgeReply(model, { criterion, messages: last?.messages ?? [], reply: last?.replay.reply ?? "" }, signal));
  }
  return out;
}
