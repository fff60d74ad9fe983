import { WardrikError } from "@wardrik/protocol";
import { historyAt, type HistoryAt } from "../runtime/conversation-at.js";
import { toUsd } from "../store/money.js";
import type { AgentRow, Store } from "../store/store.js";
import { CallRecord, type RecordedCall } from "../tools/recorded-toolset.js";
import { personDecisions, readCall, recordedCalls, type PersonDecision, type ReadCall } from "./recorded-calls.js";
import type { ReplayInput } from "./replay-settings.js";

/** How a recorded turn went. */
export interface OriginalTurn {
  status: string;
  reply?: string;
  reason?: string;
  iterations: number;
  cost_usd: number;
  calls: ReadCall[];
}

export interface PlannedTurn {
  /** Its number in the conversation (1 for a new message). */
  turn: number;
  run?: string;
  messages: string[];
  original?: OriginalTurn;
}

/** What a replay runs: the turns, the history before the first, and the record their tools are answered from. */
export interface ReplayPlan {
  conversation: string;
  /** Set when the turns are recorded ones. */
  recorded: boolean;
  history: Pick<HistoryAt, "entries" | "summary">;
  turns: PlannedTurn[];
  record: CallRecord;
  decided: (tool: string, args: unknown) => PersonDecision | undefined;
}

export async function planReplay(store: Store, agent: AgentRow, input: ReplayInput): Promise<ReplayPlan> {
  if (input.message !== undefined) {
    if (input.conversation !== undefined || input.turns !== undefined) {
      throw new WardrikError("bad_request", "Give message (a new turn) or conversation with turns (recorded turns), not both.");
    }
    const scripted: RecordedCall[] = Object.entries(input.tool_results ?? {}).map(([tool, output]) => ({
      tool,
      outcome: { ok: true, output },
    }));
    return {
      conversation: "main",
      recorded: false,
      history: { entries: [], summary: null },
      turns: [{ turn: 1, messages: [input.message] }],
      record: new CallRecord(scripted, "script"),
      decided: () => undefined,
    };
  }
  if (input.tool_results !== undefined)
    throw new WardrikError("bad_request", "tool_results goes with message; a recorded turn's tools answer from the record.");
  if (input.conversation === undefined)
    throw new WardrikError("bad_request", "Give conversation (recorded turns to replay) or message (a new turn).");
  const key = input.conversation;
  const conv = await store.conversations.find(agent.id, key);
  if (!conv) throw new WardrikError("not_found", `Agent ${agent.name} has no conversation ${key}.`);
  const marks = await store.record.turns(agent.id, conv.id);
  if (marks.length === 0) throw new WardrikError("bad_request", `Conversation ${key} of agent ${agent.name} has no turns to replay.`);
  const from = input.turns?.from ?? 1;
  const to = input.turns?.to ?? marks.length;
  if (from > marks.length || to > marks.length || to < from) {
    throw new WardrikError(
      "bad_request",
      `Conversation ${key} has turns 1 to ${marks.length}; turns ${from}..${to} ${to < from ? "is an empty range" : "are not all there"}.`,
    );
  }
  const numbered = await Promise.all(marks.map(async (m, i) => ({ turn: i + 1, run: m.run, calls: await store.calls.ofTurn(m.run) })));
  const turns: PlannedTurn[] = [];
  for (const { turn, run, calls } of numbered.slice(from - 1, to)) {
    const row = await store.turns.get(run);
    turns.push({
      turn,
      run,
      messages: await store.inputs.textsOf(run),
      ...(row
        ? {
            original: {
              status: row.status,
              ...(row.reply !== null ? { reply: row.reply } : {}),
              ...(row.reason ? { reason: row.reason } : {}),
              iterations: row.iterations,
              cost_usd: toUsd(row.spend_micros),
              calls: calls.map(readCall),
            },
          }
        : {}),
    });
  }
  // The history as it stood just before the first replayed turn started.
  const history = await historyAt(store, agent, conv, marks[from - 1]!.startedSeq - 1);
  return {
    conversation: key,
    recorded: true,
    history,
    turns,
    record: new CallRecord(recordedCalls(numbered), "record"),
    decided: personDecisions(numbered.flatMap((n) => n.calls)),
  };
}
