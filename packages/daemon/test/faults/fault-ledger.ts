/**
 * What a run of kills came to, counted from ground truth: the daemons' record
 * (the agents' events, read from any node) against the workers' own logs
 * (each worker appends every execution, with the call's idempotency key, to
 * a file of its own; see fixtures/fault-worker.ts). The kill benchmarks print
 * these counts, and their short seeded passes in CI assert on them. No vitest
 * here: the benchmarks use it too.
 */
import { existsSync, readFileSync } from "node:fs";
import { LOST_ANSWER } from "../../src/runtime/types.js";
import { SAFE, type FaultTool } from "./fault-agent.js";
import { short, type FaultEvent } from "./fault-api.js";
import { lostAnswerGrants } from "./fault-settle.js";
import type { LogEntry } from "./fault-worker-process.js";

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
  /**
   * Lost-answer approvals asked of a person for a call a worker had already
   * finished and recorded as finished (in its finished-calls store), so a
   * worker could have answered for it.
   */
  asked_about_finished: number;
  /**
   * Lost-answer approvals for a call whose effect had completed, but whose
   * worker process died before its finished-calls record reached the disk:
   * nothing anywhere could tell that it ran (the person is told so). Counted
   * apart, not as asked_about_finished.
   */
  asked_about_unrecorded: number;
  /** Lost-answer approvals asked in all. */
  asked: number;
  /**
   * Unsafe calls whose effect completed (the worker logged its end) more than
   * once, on any worker, though a record of the first had reached a store.
   */
  effects_run_twice: number;
  /** Unsafe calls whose effect completed twice after an approval of an asked_about_unrecorded ask. */
  effects_run_twice_unrecorded: number;
}

export const NO_COUNTS: FaultCounts = {
  accepted: 0,
  lost: 0,
  failed_turns: 0,
  failed_calls: 0,
  completed_reruns: 0,
  unsafe_reruns_without_approval: 0,
  asked_about_finished: 0,
  asked_about_unrecorded: 0,
  asked: 0,
  effects_run_twice: 0,
  effects_run_twice_unrecorded: 0,
};

/** Whether a count that must be 0 is not: something accepted lost, or a finished call run again or asked about. */
export function brokenCounts(c: FaultCounts): boolean {
  return c.lost + c.completed_reruns + c.unsafe_reruns_without_approval + c.asked_about_finished + c.effects_run_twice > 0;
}

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
 * `recorded`: when each key was recorded finished (ms), read from the
 * workers' finished-calls files, for workers that may die (see
 * readFinishedRecords); without it every finished execution counts as
 * remembered (a worker that lives keeps it in memory).
 */
export function countFaults(input: {
  events: FaultEvent[];
  logs: LogEntry[];
  accepted: string[];
  recorded?: ReadonlyMap<string, number[]>;
}): FaultCounts {
  const { events, logs, accepted, recorded } = input;
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
    // In time order: the logs are concatenated per worker file, so a later run's lines may come first.
    const log = (byKey.get(call.id) ?? []).sort((a, b) => a.time - b.time);
    const starts = log.filter((l) => l.phase === "start");
    const finished = log.filter((l) => l.phase === "end");
    const completed = of("call.completed");
    if (of("call.failed").length > 0) c.failed_calls += 1;
    const firstDone = completed[0];
    if (completed.length > 1 || (firstDone && starts.some((s) => s.time > Date.parse(firstDone.time)))) c.completed_reruns += 1;
    const lostAnswer = of("approval.requested").filter((e) => e.data.reason === LOST_ANSWER || e.data.lost === true);
    c.asked += lostAnswer.length;
    // Before `at`: a worker had finished the call, and a record of it was on disk (or in a live worker's memory).
    const finishedBy = (at: number) => finished.some((f) => f.time <= at);
    const recordedBy = (at: number) => (recorded ? (recorded.get(call.id) ?? []).some((t) => t <= at) : finishedBy(at));
    for (const a of lostAnswer) {
      const at = Date.parse(a.time);
      if (recordedBy(at)) c.asked_about_finished += 1;
      else if (finishedBy(at)) c.asked_about_unrecorded += 1;
    }
    if (!call.unsafe) continue;
    // A policy's ask granted lets the call run once; only an approval of a lost answer allows another run.
    if (starts.length > 1 + lostAnswerGrants(call.events)) c.unsafe_reruns_without_approval += 1;
    if (finished.length > 1) {
      // The second effect began after a record of the first was kept: a worker could have answered instead.
      const second = starts.filter((s) => s.time >= finished[0]!.time)[0];
      if (second === undefined || recordedBy(second.time)) c.effects_run_twice += 1;
      else c.effects_run_twice_unrecorded += 1;
    }
  }
  return c;
}

/**
 * When each call was recorded finished, by idempotency key (ms), from the
 * finished-calls files the workers kept (the SDK's FileFinishedCalls, one
 * JSON line per call; a torn last line is skipped, as the SDK skips it).
 */
export function readFinishedRecords(files: string[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const file of files) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, "utf8").split("\n")) {
      let r: { key?: unknown; at?: unknown };
      try {
        r = JSON.parse(line) as { key?: unknown; at?: unknown };
      } catch {
        continue;
      }
      if (typeof r.key !== "string" || typeof r.at !== "number") continue;
      out.set(r.key, [...(out.get(r.key) ?? []), r.at]);
    }
  }
  return out;
}
