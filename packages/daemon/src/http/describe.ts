import type { AgentDetail, AgentTools, PolicyView, TriggerView, TurnSummary, TurnView } from "@wardrik/protocol";
import { AGENT_DEFAULTS, toolPatternsOf, type AgentDefinition } from "../config/types.js";
import type { Policy } from "../policy/types.js";
import { dayOf } from "../store/spend.js";
import { toUsd } from "../store/money.js";
import type { Runtime } from "../runtime/runtime.js";
import type { RuntimeHooks } from "../runtime/types.js";
import { modelRefs } from "../runtime/model-fallback.js";
import type { AgentRow, CallRow, TurnRow } from "../store/rows.js";
import type { Store } from "../store/store.js";
import { toolPatternProblems } from "../tools/check-tool-patterns.js";
import { describeAgentTools } from "../tools/describe-agent-tools.js";
import { readQuestion, type Question } from "../tools/person-toolset.js";
import type { ToolRegistry } from "../tools/tool-registry.js";
import { summarise } from "./agent-summary.js";

export interface DescribeDeps {
  store: Store;
  registry: ToolRegistry;
  hooks: RuntimeHooks;
  runtime: Runtime;
  /** The agent's triggers with their next run or last firing. */
  triggers?: (row: AgentRow) => Promise<TriggerView[]>;
  /** The policy that decides the agent's calls, if one does (else the built-in default). */
  policy?: (def: AgentDefinition) => Policy | undefined;
}

/** The API's views of agents, their tools and turns, bound to the daemon's parts. */
export function describers(deps: DescribeDeps) {
  return {
    describeAgent: (row: AgentRow) => describeAgent(row, deps),
    describeTools: (row: AgentRow) => describeTools(row, deps.registry),
    describeTurn: (turn: TurnRow) => describeTurn(deps.store, turn),
  };
}

export async function describeAgent(row: AgentRow, deps: DescribeDeps): Promise<AgentDetail> {
  const def = definitionOf(row);
  const owner = await deps.store.leases.owner(row.id);
  const convs = await deps.store.conversations.list(row.id);
  const open = await deps.store.turns.open(row.id);
  const waiting = await deps.store.calls.waiting(row.id);
  const edited = await deps.store.calls.latestEdited(row.id, 5);
  const spend = await deps.store.spend.on(row.id, dayOf(deps.store.clock.now()));
  const lastActivity = await deps.store.events.lastTime(row.id);
  const caps = def.name ? deps.hooks.budget(def as AgentDefinition) : {};
  const policy = def.name ? deps.policy?.(def as AgentDefinition) : undefined;
  // Health of every source in a namespace the agent's tool patterns reach.
  const reaches = (ns: string) => (def.tools ?? []).some((p) => p === "*" || p === ns || p.startsWith(ns + "/"));
  const sources = deps.registry
    .namespaces(row.org)
    .filter(reaches)
    .flatMap((ns) => deps.registry.get(ns)?.status?.({ org: row.org, agentId: row.id }) ?? []);
  return {
    ...summarise(row, deps.runtime.waitsForTurn(row.id)),
    ...modelView(def),
    ...(def.output ? { output: def.output } : {}),
    tools: def.tools ?? [],
    ...(def.agents?.length ? { agents: def.agents } : {}),
    max_depth: def.max_depth ?? AGENT_DEFAULTS.max_depth,
    ...(def.policy ? { policy: def.policy } : {}),
    ...(policy ? { effective_policy: policyView(policy) } : {}),
    max_iterations: def.max_iterations ?? AGENT_DEFAULTS.max_iterations,
    timeout: def.timeout ?? AGENT_DEFAULTS.timeout,
    retries: def.retries ?? AGENT_DEFAULTS.retries,
    idle_timeout: def.idle_timeout ?? AGENT_DEFAULTS.idle_timeout,
    ...(def.budget !== undefined ? { budget: def.budget } : {}),
    ...(def.context_window !== undefined ? { context_window: def.context_window } : {}),
    instructions: def.instructions ?? "",
    ...(row.file ? { file: row.file } : {}),
    ...(lastActivity ? { last_activity_at: lastActivity } : {}),
    conversations: convs.map((c) => {
      const t = open.find((o) => o.conversation_id === c.id);
      return { id: c.id, key: c.key, status: t ? t.status : "idle" };
    }),
    waiting_calls: waiting.map((c) => ({
      call: c.id,
      tool: c.tool,
      run: c.run,
      args: parseArgs(c.args),
      ...(c.reason ? { reason: c.reason } : {}),
      ...(c.rule ? { rule: c.rule } : {}),
      ...questionOf(c),
    })),
    ...(edited.length > 0
      ? {
          edited_calls: edited.map((c) => ({
            call: c.id,
            tool: c.tool,
            run: c.run,
            status: c.status,
            args: parseArgs(c.args),
            original_args: parseArgs(c.original_args ?? "null"),
          })),
        }
      : {}),
    spend: {
      today_usd: toUsd(spend.model_micros + spend.tools_micros),
      model_usd: toUsd(spend.model_micros),
      tools_usd: toUsd(spend.tools_micros),
      ...(caps.per_day_usd !== undefined ? { per_day_cap_usd: caps.per_day_usd } : {}),
      ...(caps.per_turn_usd !== undefined ? { per_turn_cap_usd: caps.per_turn_usd } : {}),
    },
    tool_sources: sources,
    ...(owner ? { node: owner } : {}),
    tool_warnings: toolPatternProblems(def.tools ?? [], deps.registry, row.org),
    triggers: deps.triggers ? await deps.triggers(row) : [],
  };
}

/** What the agent can call right now (`GET /v1/agents/{id}/tools`). */
export async function describeTools(row: AgentRow, registry: ToolRegistry): Promise<AgentTools> {
  const def = definitionOf(row);
  // The tools it calls other agents with (agents:) too: `wardrik tools` lists them, and an approver may edit their arguments.
  return describeAgentTools(toolPatternsOf({ tools: def.tools ?? [], agents: def.agents }), registry, { org: row.org, agentId: row.id });
}

/** A policy as the API shows it: its rules as written, each with where it is written. */
function policyView(p: Policy): PolicyView {
  return {
    name: p.name,
    ...(p.description ? { description: p.description } : {}),
    rules: p.rules.map((r) => ({
      tool: r.tool,
      decision: r.decision,
      ...(r.when ? { when: r.when } : {}),
      ...(r.reason ? { reason: r.reason } : {}),
      ...(r.judge ? { judge: { model: r.judge.model, prompt: r.judge.prompt, on_error: r.judge.on_error } } : {}),
      ...(r.source ? { source: r.source } : {}),
    })),
    ...(p.budget ? { budget: p.budget } : {}),
  };
}

/** `model: [a, b]` shows as model a with fallback b. */
function modelView(def: Partial<AgentDefinition>): Pick<AgentDetail, "model" | "fallback_models"> {
  const [first, ...rest] = modelRefs(def);
  return { ...(first ? { model: first } : {}), ...(rest.length > 0 ? { fallback_models: rest.filter((r) => r !== undefined) } : {}) };
}

function definitionOf(row: AgentRow): Partial<AgentDefinition> {
  if (!row.definition) return {};
  try {
    return JSON.parse(row.definition) as AgentDefinition;
  } catch {
    return {}; // shown through status and reason
  }
}

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export async function describeTurn(store: Store, turn: TurnRow): Promise<TurnView> {
  const calls = await store.calls.ofTurn(turn.id);
  const inputs = await store.inputs.ofTurn(turn.id);
  const conv = await store.conversations.get(turn.conversation_id);
  return {
    ...turnFigures(turn, conv?.key ?? turn.conversation_id),
    agent: turn.agent_id,
    ...(turn.reply !== null ? { reply: turn.reply } : {}),
    ...(turn.output !== null ? { output: JSON.parse(turn.output) as unknown } : {}),
    messages: inputs,
    calls: calls.map((c) => ({
      id: c.id,
      tool: c.tool,
      status: c.status,
      round: c.round,
      ...(c.reason ? { reason: c.reason } : {}),
      args: parseArgs(c.args),
      ...(c.original_args !== null ? { original_args: parseArgs(c.original_args), edited: true } : {}),
    })),
  };
}

/** A turn's line in a conversation's list of turns. */
export function summariseTurn(turn: TurnRow, conversation: string, firstMessage: string | undefined): TurnSummary {
  return { ...turnFigures(turn, conversation), ...(firstMessage !== undefined ? { first_message: firstMessage } : {}) };
}

function turnFigures(turn: TurnRow, conversation: string) {
  return {
    id: turn.id,
    conversation,
    status: turn.status,
    ...(turn.reason ? { reason: turn.reason } : {}),
    iterations: turn.iterations,
    spend_usd: toUsd(turn.spend_micros),
    parked_ms: turn.parked_ms,
    started_at: turn.started_at,
    ...(turn.ended_at ? { ended_at: turn.ended_at } : {}),
  };
}

/** A waiting call that asks a person a question: its question and choices (a person answers it rather than approves). */
function questionOf(c: CallRow): { question?: Question } {
  if (c.error_code !== "question") return {};
  const q = readQuestion(parseArgs(c.args));
  return "error" in q ? {} : { question: q };
}
