import { isRetryableFailure, type FailureCode } from "@wardrik/protocol";
import type { CallRow, InputRow, TurnRow } from "../store/rows.js";
import { dayOf } from "../store/spend.js";
import { toUsd } from "../store/money.js";
import type { AgentRef, PendingMessage, Store, Writer } from "../store/store.js";
import { StaleTurn } from "./engine-options.js";
import { nextTurn, type TurnState } from "./turn-machine.js";
import { killOpenCalls } from "./call-moves.js";

/**
 * A turn's moves, each in the caller's transaction: the turn machine says
 * which are allowed and what they record, the store's commands write them.
 */

export interface StartedTurn {
  turn: TurnRow;
  messages: PendingMessage[];
}

/** Starts a turn that takes `inputs` (already claimed for `run`). */
export async function beginTurn(
  w: Writer,
  store: Store,
  agent: AgentRef,
  conversation: { id: string; key: string },
  run: string,
  inputs: InputRow[],
  traceContext?: string,
): Promise<StartedTurn> {
  const move = nextTurn("none", "start")!;
  const turn = await store.turns.insert(w, { id: run, agentId: agent.id, conversationId: conversation.id, traceContext }, w.now);
  w.countTurns(agent, move.counters);
  const messages = inputs.map((i) => w.appendMessage(agent, conversation.id, run, { role: "user", text: i.text, input: i.id }, i.textIn));
  const parent = await parentOf(store, inputs);
  w.emit(
    agent,
    "turn.started",
    {
      conversation: conversation.key,
      conversation_id: conversation.id,
      messages: inputs.map((i) => i.id),
      ...(parent ? { parent: { agent: parent.agent_id, run: parent.run, call: parent.id } } : {}),
    },
    { run },
  );
  return { turn, messages };
}

/** The `agents/NAME` call a message of the turn was sent by, when the turn is a child turn. */
async function parentOf(store: Store, inputs: InputRow[]): Promise<CallRow | undefined> {
  const id = inputs.find((i) => i.parentCall !== undefined)?.parentCall;
  return id === undefined ? undefined : store.calls.get(id);
}

/** running -> parked: a call of the round waits for a person. */
export async function parkTurn(w: Writer, store: Store, agent: AgentRef, run: string, round: number, waiting: string[]): Promise<void> {
  const move = nextTurn("running", "park")!;
  if (!(await store.turns.move(w, run, "running", move.to, Date.parse(w.now)))) throw new StaleTurn(`turn ${run} is no longer running`);
  w.countTurns(agent, move.counters);
  w.emit(agent, move.event as "turn.parked", { round, waiting }, { run });
}

/** parked -> running: a decision came; false when the turn was not parked. */
export async function resumeTurn(w: Writer, store: Store, agent: AgentRef, run: string): Promise<boolean> {
  const move = nextTurn("parked", "resume")!;
  if (!(await store.turns.move(w, run, "parked", move.to, Date.parse(w.now)))) return false;
  w.countTurns(agent, move.counters);
  w.emit(agent, move.event as "turn.resumed", {}, { run });
  return true;
}

export interface TurnEnd {
  reason: string | null;
  code?: FailureCode | undefined;
  reply?: string | null;
  /** The reply parsed, when it had to fit the agent's `output` schema. */
  output?: unknown;
  /** The final model reply's iteration and cost, when the turn ends with it. */
  iterations?: number;
  costMicros?: number;
}

/**
 * Ends an open turn: completes it, or fails or cancels it (closing its open
 * calls). Its spend is settled into the day's spend. False when the turn was
 * no longer `from` (someone else ended it first).
 */
export async function endTurn(
  w: Writer,
  store: Store,
  agent: AgentRef,
  turn: Pick<TurnRow, "id" | "conversation_id">,
  from: TurnState,
  input: "complete" | "fail" | "cancel",
  end: TurnEnd,
): Promise<boolean> {
  const move = nextTurn(from, input);
  if (!move) throw new Error(`A ${from} turn cannot ${input}.`);
  const code = input === "complete" ? null : (end.code ?? (input === "cancel" ? "cancelled" : "internal"));
  const ended = await store.turns.end(
    w,
    turn.id,
    from,
    {
      org: agent.org,
      status: move.to,
      reason: end.reason,
      code,
      reply: end.reply ?? null,
      ...(end.output !== undefined ? { output: JSON.stringify(end.output) } : {}),
      ...(end.iterations !== undefined ? { iterations: end.iterations } : {}),
      ...(end.costMicros !== undefined ? { costMicros: end.costMicros } : {}),
    },
    w.now,
  );
  if (!ended) return false;
  w.countTurns(agent, move.counters);
  if (input !== "complete")
    await killOpenCalls(w, store, agent, turn.id, `The turn ended: ${end.reason ?? ""}`, code === "cancelled" ? "cancelled" : "turn_ended");
  const unsettled = ended.spend_micros - ended.settled_micros;
  const tools = Math.min(ended.tool_micros, unsettled);
  await store.spend.add(w, agent.id, dayOf(new Date(w.now)), unsettled - tools, tools);
  const figures = { conversation_id: turn.conversation_id, iterations: ended.iterations, spend_usd: toUsd(ended.spend_micros) };
  if (input === "complete") {
    w.emit(
      agent,
      "turn.completed",
      { ...figures, reply: end.reply ?? "", ...(end.output !== undefined ? { output: end.output } : {}) },
      { run: turn.id },
    );
  } else {
    const failure = { code: code!, retryable: isRetryableFailure(code!), reason: end.reason ?? "" };
    w.emit(agent, input === "fail" ? "turn.failed" : "turn.cancelled", { ...figures, ...failure }, { run: turn.id });
  }
  return true;
}

/** Ends an open turn whatever its open state (running or parked). */
export async function endOpenTurn(
  w: Writer,
  store: Store,
  agent: AgentRef,
  turn: Pick<TurnRow, "id" | "conversation_id">,
  input: "fail" | "cancel",
  end: TurnEnd,
): Promise<boolean> {
  return (await endTurn(w, store, agent, turn, "running", input, end)) || (await endTurn(w, store, agent, turn, "parked", input, end));
}
