import { shortType } from "@wardrik/protocol";
import { AGENT_DEFAULTS, type AgentDefinition } from "../config/types.js";
import { toUsd } from "../store/money.js";
import type { AgentRow, TurnRow } from "../store/rows.js";
import type { Store } from "../store/store.js";
import type { Delegation, SubAgentHost } from "../tools/agents-toolset.js";
import { stopWatchOf } from "../tools/call-stopper.js";
import type { ToolCallContext, ToolOutcome, ToolScope } from "../tools/toolset.js";
import { readDefinition } from "./agent-admin.js";
import type { Runtime } from "./runtime.js";

/**
 * Sub-agents: an agents/NAME call runs as a turn of agent NAME (the child
 * turn), in the child's conversation `PARENT/KEY` (KEY: the call's
 * `conversation`, else the parent's own conversation key), and answers with
 * the child turn's end. The call stays `running` while the child turn runs,
 * as a worker call does; nothing new in the call lifecycle:
 *
 *   saved with its round: its child turn's ID is fixed by the call's ID (childRunOf), and call.started
 *     names it (child { agent, run }) in the commit that saves the call
 *   running (agents/NAME) --message queued for NAME, naming the call (inputs.parent_call)-->
 *     child turn starts with that ID: turn.started { parent } on the child names the call back
 *   child turn completed --> complete (output { reply, output? }), its spend reported as the call's cost
 *   child turn failed / cancelled --> fail (tool_error), its spend reported too
 *   call killed, or its turn cancelled or timed out --> the child turn is cancelled
 *   daemon stops mid-call --> the child turn is left running; after the restart the call
 *     runs again (safe to repeat), finds its child by its ID, and answers with that turn's end
 *     (already ended: at once), so the child's answer reaches the parent once
 *
 * Refused before any message is sent (the call fails, saying why): a child
 * that is already in the chain of calls that led here (a cycle, the calling
 * agent itself included), and a child deeper than the smallest `max_depth`
 * (default 3) of the agents in the chain.
 */
/** What a call waits on for its child turn: the event bus's word of the child's events (this process's, and other nodes'). */
export interface ChildEvents {
  subscribe(agentId: string, listener: (event: { type: string }) => void): () => void;
  onPoke(agentId: string, listener: (agentId: string) => void, types?: readonly string[]): () => void;
}

export function subAgentHost(rt: Runtime, bus: ChildEvents): SubAgentHost {
  return {
    callable: (scope) => callable(rt.store, scope),
    run: (child, delegation, ctx) => runChildTurn(rt, bus, child, delegation, ctx),
  };
}

function definitionOf(row: AgentRow | undefined): AgentDefinition | undefined {
  if (!row) return undefined;
  try {
    return readDefinition(row);
  } catch {
    return undefined;
  }
}

async function callable(store: Store, scope: ToolScope): Promise<{ name: string; description: string }[]> {
  const names = definitionOf(await store.agents.get(scope.agentId))?.agents ?? [];
  const out: { name: string; description: string }[] = [];
  for (const name of names) {
    const def = definitionOf(await store.agents.byName(scope.org, name));
    if (def) out.push({ name, description: def.description });
  }
  return out;
}

/** The agents of the chain of calls that led to turn `run` of `agentId`: that agent first, then its caller, and so on. */
async function chainOf(store: Store, agentId: string, run: string): Promise<string[]> {
  const chain = [agentId];
  // Bounded: a chain is never longer than the largest max_depth allows, and a record that loops must not hang a call.
  for (let i = 0; i < 100; i++) {
    const parentCall = await store.inputs.parentCallOf(run);
    const call = parentCall === undefined ? undefined : await store.calls.get(parentCall);
    if (!call) break;
    chain.push(call.agent_id);
    run = call.run;
  }
  return chain;
}

async function namesOf(store: Store, ids: string[]): Promise<string[]> {
  return Promise.all(ids.map(async (id) => (await store.agents.get(id))?.name ?? id));
}

/** Why a call from the chain `chain` (calling agent first) to `child` is refused, if it is. */
async function refusal(store: Store, chain: string[], child: AgentRow): Promise<string | undefined> {
  const path = async () => [...(await namesOf(store, [...chain].reverse())), child.name].join(" → ");
  if (chain.includes(child.id))
    return `Refused: ${child.name} is already in the chain of calls that led here (${await path()}); an agent may not reach itself, directly or through others.`;
  const defs = await Promise.all(chain.map(async (id) => definitionOf(await store.agents.get(id))));
  const maxDepth = Math.min(...defs.map((d) => d?.max_depth ?? AGENT_DEFAULTS.max_depth));
  if (chain.length > maxDepth)
    return `Refused: calling ${child.name} would nest agents ${chain.length} deep (${await path()}); max_depth is ${maxDepth}.`;
  return undefined;
}

async function runChildTurn(
  rt: Runtime,
  bus: ChildEvents,
  childName: string,
  delegation: Delegation,
  ctx: ToolCallContext,
): Promise<ToolOutcome> {
  const store = rt.store;
  const child = await store.agents.byName(ctx.org, childName);
  if (!child) return { ok: false, kind: "failed", error: `There is no agent ${childName}.` };
  const parent = await store.agents.get(ctx.agent);
  if (!parent) return { ok: false, kind: "failed", error: "The calling agent no longer exists." };
  const chain = await chainOf(store, ctx.agent, ctx.run);
  const refused = await refusal(store, chain, child);
  if (refused) return { ok: false, kind: "failed", error: refused };
  const key = `${parent.name}/${delegation.conversation ?? (await parentConversationKey(store, ctx.run))}`;
  // Started again after a restart: the message the first attempt sent is found by the call's ID, not sent twice.
  if (!(await store.inputs.sentBy(ctx.callId)))
    await rt.enqueue(child, key, delegation.message, { parentCall: ctx.callId, callerTrace: ctx.traceparent });
  const stop = stopWatchOf(ctx);
  const offStop = stop.onStop(() => {
    // The daemon stopping leaves the child running: after the restart this call finds it again.
    if (stop.reason?.why !== "shutdown")
      void rt.cancel(child, key, `The call ${ctx.callId} that ran this turn for its caller was stopped.`).catch(() => undefined);
  });
  try {
    const ended = await childEnd(store, bus, child.id, ctx.callId, stop);
    if (ended === undefined) return { ok: false, kind: "killed", error: `agents/${childName} was stopped.` };
    if (ended === "dropped")
      return {
        ok: false,
        kind: "failed",
        error: `The message to ${childName} was dropped before a turn took it (its conversation was cancelled).`,
      };
    if (ended.spend_micros > 0) ctx.cost(toUsd(ended.spend_micros));
    if (ended.status === "completed") {
      const output = ended.output === null ? undefined : (JSON.parse(ended.output) as unknown);
      return { ok: true, output: { reply: ended.reply ?? "", ...(output !== undefined ? { output } : {}) } };
    }
    return {
      ok: false,
      kind: "failed",
      error: `${childName}'s turn ${ended.status === "failed" ? "failed" : "was cancelled"}: ${ended.reason ?? "no reason given"}`,
    };
  } finally {
    offStop();
  }
}

async function parentConversationKey(store: Store, run: string): Promise<string> {
  const turn = await store.turns.get(run);
  const conversation = turn ? await store.conversations.get(turn.conversation_id) : undefined;
  return conversation?.key ?? run;
}

const WAKING = new Set(["turn.started", "turn.completed", "turn.failed", "turn.cancelled", "messages.dropped"]);

/** The ended child turn of call `callId`, "dropped" when its message was dropped unanswered, undefined once the call stops. */
async function childEnd(
  store: Store,
  bus: ChildEvents,
  childId: string,
  callId: string,
  stop: ReturnType<typeof stopWatchOf>,
): Promise<TurnRow | "dropped" | undefined> {
  let wake = () => {};
  const woken = () => wake();
  const offBus = bus.subscribe(childId, (e) => {
    if (WAKING.has(shortType(e.type))) woken();
  });
  const offPoke = bus.onPoke(childId, woken, [...WAKING]);
  const offStop = stop.onStop(woken);
  // Where another node may write the child's events and its word of them can be lost, the record is read now and then too.
  const lookMs = store.db.dialect.ownLookMs;
  try {
    for (;;) {
      const next = new Promise<void>((resolve) => {
        wake = resolve;
      });
      if (stop.reason) return undefined;
      const sent = await store.inputs.sentBy(callId);
      if (sent?.status === "dropped") return "dropped";
      const turn = sent?.run ? await store.turns.get(sent.run) : undefined;
      if (turn && turn.status !== "running" && turn.status !== "parked") return turn;
      const timer = lookMs === undefined ? undefined : setTimeout(woken, lookMs);
      await next;
      clearTimeout(timer);
    }
  } finally {
    offBus();
    offPoke();
    offStop();
  }
}
