import { WardrikError } from "@wardrik/protocol";
import type { AgentRow, CallRow } from "../store/rows.js";
import { parseStored } from "../store/state-error.js";
import type { AgentRef, Writer } from "../store/store.js";
import type { AgentDriver } from "./agent-driver.js";
import { approveCall, killCall, refuseCall } from "./call-moves.js";
import { isFinalCall } from "./call-machine.js";
import type { Runtime } from "./runtime.js";
import { endedIn } from "./turn-bookkeeping.js";
import { endOpenTurn, resumeTurn } from "./turn-moves.js";

/**
 * What people do to running work: cancel turns, kill calls, clear history,
 * decide waiting calls. Any node may do each of these; when another node
 * drives the agent, the change commits here and pokes that node.
 */

/** The agent's driver here (when this node owns it) and the reference its writes use. */
export async function reach(rt: Runtime, agent: AgentRow): Promise<{ d: AgentDriver | undefined; ref: AgentRef }> {
  const d = await rt.driverIfOwned(agent.id);
  return { d, ref: d?.ref ?? { id: agent.id, org: agent.org } };
}

/** Stops open turns (all, or one conversation's) and drops their queued messages. */
export async function cancel(
  rt: Runtime,
  agent: AgentRow,
  conversationKey?: string,
  reason = "Cancelled by a person.",
): Promise<{ cancelled: string[]; dropped: number }> {
  const { d, ref } = await reach(rt, agent);
  const convId = conversationKey !== undefined ? (await rt.store.conversations.find(agent.id, conversationKey))?.id : undefined;
  if (conversationKey !== undefined && !convId)
    throw new WardrikError("not_found", `Agent ${agent.name} has no conversation ${conversationKey}.`);
  const turns = (await rt.store.turns.open(agent.id)).filter((t) => !convId || t.conversation_id === convId);
  const { cancelled, dropped } = await rt.store.tx(async (w) => {
    const ended: string[] = [];
    for (const t of turns) {
      if (await endOpenTurn(w, rt.store, ref, t, "cancel", { reason, code: "cancelled" })) {
        ended.push(t.id);
        if (d) endedIn(d, w, t);
      }
    }
    const n = await rt.store.inputs.drop(w, agent.id, convId);
    if (n > 0) w.emit(ref, "messages.dropped", { count: n, ...(conversationKey !== undefined ? { conversation: conversationKey } : {}) });
    if (!d && ended.length > 0) w.afterFlush((tx) => rt.ownership.poke(tx, agent.id, { kind: "cancel", turns: ended }));
    return { cancelled: ended, dropped: n };
  }, agent.org);
  for (const t of cancelled) d?.turnStops.cancel(t);
  return { cancelled, dropped };
}

/** Stops one tool call; the model is told and the turn goes on. */
export async function kill(rt: Runtime, agent: AgentRow, callId: string): Promise<CallRow> {
  // Before anything is read: a dispatch about to start (the call just committed as running) sees the kill at once.
  const awake = rt.awake(agent.id);
  const held = awake && !awake.calls.has(callId) ? awake : undefined;
  held?.calls.holdKill(callId);
  const call = await rt.store.calls.get(callId);
  if (!call || call.agent_id !== agent.id) {
    held?.calls.dropKill(callId);
    throw new WardrikError("not_found", `Agent ${agent.name} has no call ${callId}.`);
  }
  const { d, ref } = await reach(rt, agent);
  if (call.status === "running" && !d) {
    // It runs on the node that drives the agent: that node stops it.
    await rt.store.db.transaction((tx) => rt.ownership.poke(tx, agent.id, { kind: "kill", call: callId }));
    return call;
  }
  if (call.status === "running" && d) {
    if (d.calls.kill(callId)) return call;
    if (d.turnStops.has(call.run)) {
      // Committed as running, not dispatched yet: the dispatch aborts it at once.
      d.calls.holdKill(callId);
      return call;
    }
  }
  d?.calls.dropKill(callId);
  if (isFinalCall(call.status)) {
    throw new WardrikError("conflict", `Call ${callId} is already ${call.status}; only running or waiting calls can be stopped.`);
  }
  const message = "A person stopped this call before it finished.";
  const conversation = await decide(rt, d, ref, call, async (w) => killCall(w, rt.store, ref, call, call.status, message, "killed"));
  if (conversation) d?.kick(conversation);
  return call;
}

export async function clear(rt: Runtime, agent: AgentRow, conversationKey?: string): Promise<{ cleared: string[] }> {
  const { d, ref } = await reach(rt, agent);
  const convs = (await rt.store.conversations.list(agent.id)).filter((c) => conversationKey === undefined || c.key === conversationKey);
  if (conversationKey !== undefined && convs.length === 0)
    throw new WardrikError("not_found", `Agent ${agent.name} has no conversation ${conversationKey}.`);
  const open = await rt.store.turns.open(agent.id);
  const busy = convs.filter((c) => open.some((t) => t.conversation_id === c.id));
  if (busy.length > 0) {
    throw new WardrikError(
      "conflict",
      `Conversation ${busy.map((c) => c.key).join(", ")} has a turn in progress; cancel it first (wardrik agent cancel ${agent.name}).`,
    );
  }
  await rt.store.tx(async (w) => {
    for (const c of convs) {
      await rt.store.conversations.clear(w, c.id);
      w.emit(ref, "conversation.cleared", { conversation: c.key, conversation_id: c.id });
    }
    if (!d) w.afterFlush((tx) => rt.ownership.poke(tx, agent.id, { kind: "cleared", conversations: convs.map((c) => c.id) }));
  }, agent.org);
  for (const c of convs) d?.forgetPrompt(c.id);
  return { cleared: convs.map((c) => c.key) };
}

/** `args`: arguments a person edited (already checked against the tool's schema); the call runs with them. */
export function approve(rt: Runtime, agent: AgentRow, callId: string, args?: Record<string, unknown>, by?: string): Promise<CallRow> {
  return resolveApproval(rt, agent, callId, { verdict: "approve", args, by });
}

export function deny(rt: Runtime, agent: AgentRow, callId: string, reason?: string, by?: string): Promise<CallRow> {
  return resolveApproval(rt, agent, callId, { verdict: "deny", reason, by });
}

/** A person's decision on a waiting call: `by` names them (`token:NAME`, `slack:USER`) on the record. */
interface Decision {
  verdict: "approve" | "deny";
  reason?: string | undefined;
  args?: Record<string, unknown> | undefined;
  by?: string | undefined;
}

async function resolveApproval(rt: Runtime, agent: AgentRow, callId: string, decision: Decision): Promise<CallRow> {
  const { verdict, reason, args, by } = decision;
  const call = await rt.store.calls.get(callId);
  if (!call || call.agent_id !== agent.id) throw new WardrikError("not_found", `Agent ${agent.name} has no call ${callId}.`);
  if (verdict === "approve" && call.status === "waiting" && call.error_code === "question")
    throw new WardrikError(
      "not_waiting",
      `Call ${callId} asks a person a question; answer it (wardrik answer ${agent.name} ${callId} TEXT).`,
    );
  const { d, ref } = await reach(rt, agent);
  const why = reason?.trim() ? reason.trim() : "No reason given.";
  const conversation = await decide(rt, d, ref, call, async (w) =>
    verdict === "approve"
      ? approveCall(
          w,
          rt.store,
          ref,
          call,
          args && { args, original: parseStored(call.original_args ?? call.args, `call ${call.id} arguments`) },
          by,
        )
      : refuseCall(w, rt.store, ref, call, why, by),
  );
  if (conversation === undefined) {
    const now = await rt.store.calls.get(callId);
    throw new WardrikError("not_waiting", `Call ${callId} is not waiting for approval (it is ${now?.status ?? call.status}).`);
  }
  d?.kick(conversation);
  return (await rt.store.calls.get(callId))!;
}

/**
 * Applies a decision on a call of a parked or running turn, and resumes the
 * turn if it was parked. The turn row is locked first, as the driver locks it
 * to park, so a decision never lands between its check and its park. When
 * another node drives the agent, it is poked in the same commit. Returns the
 * turn's conversation, or undefined when the call had changed.
 */
export async function decide(
  rt: Runtime,
  d: AgentDriver | undefined,
  ref: AgentRef,
  call: CallRow,
  move: (w: Writer) => Promise<boolean>,
): Promise<string | undefined> {
  const turn = await rt.store.turns.get(call.run);
  if (!turn) return undefined;
  return rt.store.tx(async (w) => {
    await rt.store.turns.lock(w, turn.id);
    if (!(await move(w))) return undefined;
    if (await resumeTurn(w, rt.store, ref, turn.id)) {
      if (d) w.afterCommit(() => d.conversations.markUnknown(turn.conversation_id));
    }
    if (!d) w.afterFlush((tx) => rt.ownership.poke(tx, call.agent_id, { kind: "work" }));
    return turn.conversation_id;
  }, ref.org);
}
