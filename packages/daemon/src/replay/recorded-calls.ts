import type { CallRow } from "../store/rows.js";
import { toUsd } from "../store/money.js";
import { canonicalJson, type RecordedCall } from "../tools/recorded-toolset.js";

/** What a person decided about a recorded call that waited for approval. */
export interface PersonDecision {
  approved: boolean;
  reason?: string;
  /** The arguments the person approved it with, when they edited them. */
  args?: Record<string, unknown>;
}

/** A recorded call as replays and reports read it. */
export interface ReadCall {
  tool: string;
  args: unknown;
  status: string;
  decision: string | null;
  output?: unknown;
  error?: string;
  cost_usd: number;
}

/** The call's arguments, result or error and cost, parsed from its row. */
export function readCall(c: CallRow): ReadCall {
  const result = c.result === null ? undefined : parseOr(c.result);
  return {
    tool: c.tool,
    args: parseOr(c.args),
    status: c.status,
    decision: c.decision,
    ...(result === undefined
      ? {}
      : c.status === "completed"
        ? { output: result }
        : { error: typeof result === "string" ? result : JSON.stringify(result) }),
    cost_usd: toUsd(c.cost_micros),
  };
}

/** A call that ran (its tool was reached) has an answer the record can give again. */
function ran(c: CallRow): boolean {
  return c.started_at !== null && c.result !== null && ["completed", "failed", "timed_out", "killed"].includes(c.status);
}

/** The answers of a conversation's recorded calls, `turn` being the number of the turn each belongs to. */
export function recordedCalls(turns: readonly { turn: number; calls: readonly CallRow[] }[]): RecordedCall[] {
  const out: RecordedCall[] = [];
  for (const { turn, calls } of turns) {
    for (const c of calls) {
      if (!ran(c)) continue;
      const read = readCall(c);
      out.push({
        tool: c.tool,
        args: read.args,
        outcome: c.status === "completed" ? { ok: true, output: read.output } : { ok: false, kind: "failed", error: read.error ?? "" },
        turn,
        readOnly: c.read_only === 1,
        idempotent: c.idempotent === 1,
      });
    }
  }
  return out;
}

/**
 * What people decided about calls that waited for approval, by tool and the
 * arguments the model asked for: a replayed call that waits the same way is
 * decided as it was.
 */
export function personDecisions(calls: readonly CallRow[]): (tool: string, args: unknown) => PersonDecision | undefined {
  const decided = new Map<string, PersonDecision>();
  for (const c of calls) {
    if (c.decision !== "ask" || c.status === "waiting") continue;
    const asked = parseOr(c.original_args ?? c.args);
    const key = `${c.tool} ${canonicalJson(asked)}`;
    if (c.status === "denied") {
      const said = c.result === null ? undefined : parseOr(c.result);
      const reason = typeof said === "string" ? said.replace(/^A person refused this call: /, "") : undefined;
      decided.set(key, { approved: false, ...(reason ? { reason } : {}) });
    } else if (c.started_at !== null || c.status === "approved") {
      const edited = c.original_args !== null ? (parseOr(c.args) as Record<string, unknown>) : undefined;
      decided.set(key, { approved: true, ...(edited ? { args: edited } : {}) });
    }
  }
  return (tool, args) => decided.get(`${tool} ${canonicalJson(args)}`);
}

function parseOr(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
