/**
 * What a run of kills came to, counted from ground truth: the daemons' record
 * (the agents' events, read from any node) against the workers' own logs
 * (each worker appends every execution, with the call's idempotency key, to
 * a file of its own; see fixtures/fault-worker.ts). The kill benchmarks print
 * these counts, and their short seeded passes in CI assert on them. No vitest
 * here: the benchmarks use it too.
 */
import { LOST_ANSWER, SAFE, lostAnswerGrants, short, type FaultEvent, type FaultTool, type LogEntry } from "./fault-kit.js";

export interface FaultCounts {
  /** Messages the API accepted (202). */
  accepted: number;
  /** Accepted messages with no recorded message, no turn, or a turn that never ended. */
  lost: number;
  /** Turns that ended failed or cancelled (a reason in the record, not a loss). */
  failed_turns: number;
  /** Calls recorded failed (the model was told why), such as "No worker serves ..." while no worker was connected. */
  failed_calls: number;
  /** Calls a worker started again after their result was stored, or that completed twice. */
  completed_reruns: number;
  /** Unsafe calls that a worker started more often than once plus once per approval of a lost answer. */
  unsafe_reruns_without_approval: number;
  /** Lost-answer approvals asked of a person for a call a worker had already finished. */
  asked_about_finished: number;
  /** Lost-answer approvals asked in all. */
  asked: number;
  /** Unsafe calls whose effect completed (the worker logged its end) more than once, on any worker. */
  effects_run_twice: number;
}

export const NO_COUNTS: FaultCounts = {
  accepted: 0,
  lost: 0,
  failed_turns: 0,
  failed_calls: 0,
  completed_reruns: 0,
  unsafe_reruns_without_approval: 0,
  asked_about_finished: 0,
  asked: 0,
  effects_run_twice: 0,
};

export function addCounts(a: FaultCounts, b: FaultCounts): FaultCounts {
  const out = { ...a };
  for (const k of Object.keys(out) as (keyof FaultCounts)[]) out[k] += b[k];
  return out;
}

interface SavedCall {
  id: string;
  unsafe: boolean;
  events: FaultEvent[];
}

/**
 * Counts over `events` (every event of the agents concerned, from one
 * node's API), `logs` (every worker's log) and `accepted` (message IDs).
 * A call is known by its idempotency key, which is its ID in the record.
 */
export function countFaults(input: { events: FaultEvent[]; logs: LogEntry[]; accepted: string[] }): FaultCounts {
  const { events, logs, accepted } = input;
  const c: FaultCounts = { ...NO_COUNTS, accepted: accepted.length };
  const queued = new Set(events.filter((e) => short(e.type) === "message.queued").map((e) => String(e.data.message)));
  const ends = new Map<string, string>();
  for (const e of events)
    if (e.run !== undefined && /^turn\.(completed|failed|cancelled)$/.test(short(e.type))) ends.set(e.run, short(e.type));
  const runOf = new Map<string, string>();
  for (const e of events)
    if (short(e.type) === "turn.started") for (const m of e.data.messages as string[]) if (!runOf.has(m)) runOf.set(m, e.run!);
  for (const m of accepted) {
    const run = runOf.get(m);
    if (!queued.has(m) || run === undefined || !ends.has(run)) c.lost += 1;
  }
  c.failed_turns = [...ends.values()].filter((t) => t !== "turn.completed").length;

  const calls = new Map<string, SavedCall>();
  for (const e of events) {
    if (short(e.type) !== "round.saved") continue;
    for (const s of e.data.calls as { call: string; tool: string; read_only: boolean; idempotent: boolean }[]) {
      const known = s.tool.startsWith("workers/") ? SAFE[s.tool.slice("workers/".length) as FaultTool] : undefined;
      calls.set(s.call, { id: s.call, unsafe: known === false || (known === undefined && !s.read_only && !s.idempotent), events: [] });
    }
  }
  for (const e of events) {
    const id = e.data.call;
    if (typeof id === "string" && short(e.type) !== "round.saved") calls.get(id)?.events.push(e);
  }
  const byKey = new Map<string, LogEntry[]>();
  for (const l of logs) {
    if (!byKey.has(l.key)) byKey.set(l.key, []);
    byKey.get(l.key)!.push(l);
  }
  for (const call of calls.values()) {
    const of = (t: string) => call.events.filter((e) => short(e.type) === t);
    const log = byKey.get(call.id) ?? [];
    const starts = log.filter((l) => l.phase === "start");
    const finished = log.filter((l) => l.phase === "end");
    const completed = of("call.completed");
    if (of("call.failed").length > 0) c.failed_calls += 1;
    const firstDone = completed[0];
    if (completed.length > 1 || (firstDone && starts.some((s) => s.time > Date.parse(firstDone.time)))) c.completed_reruns += 1;
    const lostAnswer = of("approval.requested").filter((e) => e.data.reason === LOST_ANSWER || e.data.lost === true);
    c.asked += lostAnswer.length;
    c.asked_about_finished += lostAnswer.filter((a) => finished.some((f) => f.time <= Date.parse(a.time))).length;
    if (!call.unsafe) continue;
    // A policy's ask granted lets the call run once; only an approval of a lost answer allows another run.
    if (starts.length > 1 + lostAnswerGrants(call.events)) c.unsafe_reruns_without_approval += 1;
    if (finished.length > 1) c.effects_run_twice += 1;
  }
  return c;
}
