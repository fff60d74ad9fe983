import { WardrikError } from "@wardrik/protocol";
import type { HistoryEntry } from "../store/message-format.js";
import type { ConversationRow, HistoryMark, Store, TurnMark } from "../store/store.js";

/**
 * A conversation's history as it stood at one event of the agent's log: the
 * messages of every turn that had ended by then (a turn still running at that
 * point is left out whole, so the history never ends in calls without their
 * results), and the compaction summary in force then.
 */
export interface HistoryAt {
  entries: HistoryEntry[];
  /** The summary of the latest compaction by then, with the seq of the last message it folded. */
  summary: { text: string; upto: number } | null;
  /** How many turns the entries come from. */
  turns: number;
  /** A turn that had started but not ended at that event. */
  openRun?: string;
}

/** Which turns' messages and which summary make up the history at `atSeq`: the rule, on the marks alone. */
export interface HistoryPlan {
  runs: Set<string>;
  /** Whether the messages a fork copied in (their runs are turns of another conversation) belong to it. */
  copied: boolean;
  summary: { text: string; upto: number } | null;
  openRun?: string;
  /** Set when a clear after `atSeq` deleted messages that the history at `atSeq` held. */
  lostToClearAt?: number;
}

export function planHistoryAt(turns: readonly TurnMark[], marks: readonly HistoryMark[], atSeq: number): HistoryPlan {
  // Messages of turns that ended before the latest clear are deleted; after it the history starts again.
  const clears = marks.filter((m) => m.kind === "cleared");
  const lastClear = clears.filter((m) => m.seq <= atSeq).at(-1)?.seq ?? 0;
  const runs = new Set(turns.filter((t) => t.endedSeq !== null && t.endedSeq <= atSeq && t.endedSeq > lastClear).map((t) => t.run));
  const open = turns.find((t) => t.startedSeq <= atSeq && (t.endedSeq === null || t.endedSeq > atSeq));
  const compaction = marks.filter((m) => m.kind === "compacted" && m.seq > lastClear && m.seq <= atSeq).at(-1);
  const forked = marks.find((m) => m.kind === "forked");
  const plan: HistoryPlan = {
    runs,
    copied: forked !== undefined && forked.seq <= atSeq && forked.seq > lastClear,
    summary: compaction?.kind === "compacted" ? { text: compaction.summary, upto: compaction.uptoSeq } : null,
    ...(open ? { openRun: open.run } : {}),
  };
  const laterClear = clears.find((m) => m.seq > atSeq);
  if (laterClear && (runs.size > 0 || plan.copied)) plan.lostToClearAt = laterClear.seq;
  return plan;
}

/**
 * The history of `conversation` at event `atSeq`. A conversation cleared
 * after that event no longer has those messages (the events keep what
 * happened): that is a conflict that says where to fork instead.
 */
export async function historyAt(
  store: Store,
  agent: { id: string; name: string },
  conversation: ConversationRow,
  atSeq: number,
): Promise<HistoryAt> {
  const [turns, marks] = await Promise.all([store.record.turns(agent.id, conversation.id), store.record.marks(agent.id, conversation.id)]);
  const plan = planHistoryAt(turns, marks, atSeq);
  if (plan.lostToClearAt !== undefined) {
    throw new WardrikError(
      "conflict",
      `Conversation ${conversation.key} of agent ${agent.name} was cleared at event ${plan.lostToClearAt}, after event ${atSeq}: the messages it held at event ${atSeq} are gone (the events still show them). Pick event ${plan.lostToClearAt} or later.`,
    );
  }
  const own = new Set(turns.map((t) => t.run));
  const entries = (await store.conversations.history(conversation.id)).filter(
    (e) => e.run !== undefined && (plan.runs.has(e.run) || (plan.copied && !own.has(e.run))),
  );
  // A summary that folded messages outside the history (the open turn's) does not describe it: the full messages do.
  const lastSeq = entries.at(-1)?.seq ?? 0;
  const summary = plan.summary && plan.summary.upto <= lastSeq ? plan.summary : null;
  return { entries, summary, turns: plan.runs.size, ...(plan.openRun ? { openRun: plan.openRun } : {}) };
}
