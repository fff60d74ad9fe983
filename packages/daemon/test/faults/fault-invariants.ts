/**
 * The promises of SPEC section 5, checked after a run of faults: the
 * daemon's record (the agent's events) against the worker's own log of every
 * execution. No vitest here: the benchmarks use it too.
 */
import { SAFE, type FaultTool } from "./fault-agent.js";
import { short, type FaultEvent } from "./fault-api.js";
import { isLostAnswer, isPolicyAsk, lostAnswerGrants } from "./fault-settle.js";
import type { LogEntry } from "./fault-worker-process.js";

export interface CheckStats {
  messages: number;
  turns: number;
  calls: number;
  executions: number;
  /** Safe calls that ran more than once (re-run after a crash). */
  safe_reruns: number;
  /** Unsafe calls that waited for approval with the lost-answer reason. */
  lost_answer_approvals: number;
  /** Calls whose worker execution ended but whose result was never stored (the worker's record). */
  lost_results: number;
}

export interface CheckReport {
  failures: string[];
  stats: CheckStats;
}

interface CallInfo {
  id: string;
  run: string;
  tool: string;
  safe: boolean;
  events: FaultEvent[];
}

/**
 * Checks the daemon's record against the worker's own:
 * - every accepted message was recorded and taken by exactly one turn, and every turn completed;
 * - every call of every saved round completed exactly once, with a result one of the worker's
 *   executions (with the call's key) produced; no call started again after its result was stored;
 * - the worker never ran a call more often than the daemon started it, never with another key,
 *   and never after the call's result was stored (a completed call never ran twice);
 * - safe calls (readOnly/idempotent) never waited for a person about a lost answer; an unsafe call
 *   ran at most once plus once per approval of a lost answer; every approval was asked with the
 *   lost-answer reason or by a policy rule (`ask`).
 */
export function checkInvariants(input: { events: FaultEvent[]; log: LogEntry[]; accepted: string[] }): CheckReport {
  const { events, log, accepted } = input;
  const failures: string[] = [];
  const fail = (m: string) => failures.push(m);

  // Messages and turns.
  const queued = new Set(events.filter((e) => short(e.type) === "message.queued").map((e) => String(e.data.message)));
  const started = events.filter((e) => short(e.type) === "turn.started");
  for (const m of accepted) if (!queued.has(m)) fail(`message ${m} was accepted (202) but has no message.queued event`);
  for (const m of new Set([...accepted, ...queued])) {
    const turns = started.filter((e) => (e.data.messages as string[]).includes(m));
    if (turns.length !== 1) fail(`message ${m} was taken by ${turns.length} turns (expected exactly 1)`);
  }
  for (const t of started) {
    const ends = events.filter((e) => e.run === t.run && /^turn\.(completed|failed|cancelled)$/.test(short(e.type)));
    if (ends.length !== 1) fail(`turn ${t.run} ended ${ends.length} times`);
    for (const end of ends) {
      if (short(end.type) !== "turn.completed") fail(`turn ${t.run} ended with ${short(end.type)}: ${String(end.data.reason ?? "")}`);
    }
  }

  // Calls, from the saved rounds.
  const calls = new Map<string, CallInfo>();
  for (const e of events) {
    if (short(e.type) !== "round.saved") continue;
    for (const c of e.data.calls as { call: string; tool: string; read_only: boolean; idempotent: boolean }[]) {
      if (calls.has(c.call)) fail(`call ${c.call} is in two saved rounds`);
      calls.set(c.call, { id: c.call, run: e.run!, tool: c.tool, safe: c.read_only || c.idempotent, events: [] });
    }
  }
  for (const e of events) {
    const id = e.data.call;
    if (typeof id === "string" && calls.has(id) && short(e.type) !== "round.saved") calls.get(id)!.events.push(e);
  }
  const byKey = new Map<string, LogEntry[]>();
  for (const l of log) {
    if (!byKey.has(l.key)) byKey.set(l.key, []);
    byKey.get(l.key)!.push(l);
  }
  // A tag names one call: every execution of it must carry the same key.
  const keysOfTag = new Map<string, Set<string>>();
  for (const l of log) {
    if (!keysOfTag.has(l.tag)) keysOfTag.set(l.tag, new Set());
    keysOfTag.get(l.tag)!.add(l.key);
  }
  for (const [tag, keys] of keysOfTag)
    if (keys.size > 1) fail(`call ${tag} ran with ${keys.size} different idempotency keys: ${[...keys].join(", ")}`);
  for (const key of byKey.keys()) if (!calls.has(key)) fail(`the worker ran key ${key}, which is no saved call`);

  let safeReruns = 0;
  let lostApprovals = 0;
  let lostResults = 0;
  for (const c of calls.values()) {
    const label = `call ${c.id} (${c.tool}${c.safe ? ", safe" : ", unsafe"})`;
    const of = (t: string) => c.events.filter((e) => short(e.type) === t);
    const completed = of("call.completed");
    const startedEv = of("call.started");
    const granted = of("approval.granted");
    const asked = of("approval.requested");
    for (const f of [...of("call.failed"), ...of("call.killed"), ...of("approval.denied")])
      fail(`${label}: ${short(f.type)}: ${JSON.stringify(f.data.error ?? f.data.reason)}`);
    const known = c.tool.startsWith("workers/") ? SAFE[c.tool.slice("workers/".length) as FaultTool] : undefined;
    if (known !== undefined && known !== c.safe) {
      fail(
        `${label}: the worker's tool is ${known ? "safe (readOnly/idempotent)" : "unsafe"}, but the round saved it as ${c.safe ? "safe" : "unsafe"} (the daemon did not know the tool when it saved the round?)`,
      );
    }
    if (completed.length !== 1) fail(`${label} completed ${completed.length} times (expected exactly 1)`);
    const done = completed[0];
    if (done) {
      for (const s of startedEv)
        if (s.seq > done.seq) fail(`${label} started again (attempt ${String(s.data.attempt)}) after its result was stored`);
    }
    for (const s of startedEv) {
      if (s.data.idempotency_key !== c.id)
        fail(`${label} attempt ${String(s.data.attempt)} had idempotency key ${String(s.data.idempotency_key)}, not ${c.id}`);
    }
    const execs = (byKey.get(c.id) ?? []).filter((l) => l.phase === "start");
    const ends = (byKey.get(c.id) ?? []).filter((l) => l.phase === "end");
    if (execs.length > startedEv.length)
      fail(`${label}: the worker ran it ${execs.length} times, the daemon started it ${startedEv.length} times`);
    if (done) {
      const doneAt = Date.parse(done.time);
      for (const x of execs)
        if (x.time > doneAt) fail(`${label} ran again (exec ${x.exec} at ${x.time}) after its result was stored at ${doneAt}`);
      const out = done.data.output as { key?: string; pid?: number; exec?: number } | undefined;
      if (!out || out.key !== c.id || !ends.some((x) => x.pid === out.pid && x.exec === out.exec)) {
        fail(`${label}: its stored result ${JSON.stringify(out)} is not one of the worker's finished executions with its key`);
      }
      lostResults += ends.filter((x) => !(x.pid === out?.pid && x.exec === out?.exec)).length;
    }
    for (const a of asked) {
      if (!isLostAnswer(a) && !isPolicyAsk(a)) fail(`${label} waited for approval with reason ${JSON.stringify(a.data.reason)}`);
    }
    const lostAsks = asked.filter(isLostAnswer);
    const reruns = lostAnswerGrants(c.events);
    if (c.safe) {
      if (lostAsks.length > 0) fail(`${label} is safe to repeat but waited for approval of a lost answer ${lostAsks.length} time(s)`);
      if (execs.length > 1) safeReruns += 1;
    } else {
      if (lostAsks.length > 0) lostApprovals += 1;
      if (execs.length > 1 + reruns)
        fail(`${label} ran ${execs.length} times with ${reruns} approval(s) of a lost answer: an unsafe call ran twice without approval`);
      if (startedEv.length > 1 + reruns)
        fail(`${label} was started ${startedEv.length} times with ${reruns} approval(s) of a lost answer (${granted.length} in all)`);
    }
  }
  return {
    failures,
    stats: {
      messages: queued.size,
      turns: started.length,
      calls: calls.size,
      executions: log.filter((l) => l.phase === "start").length,
      safe_reruns: safeReruns,
      lost_answer_approvals: lostApprovals,
      lost_results: lostResults,
    },
  };
}

/**
 * The part of the record that concerns `messages`: their message.queued events,
 * the events of the turns that took them, and the worker's executions of those
 * turns' calls (plus executions of keys that belong to no saved call at all).
 */
export function scopeToMessages(events: FaultEvent[], log: LogEntry[], messages: string[]): { events: FaultEvent[]; log: LogEntry[] } {
  const wanted = new Set(messages);
  const runs = new Set(
    events.filter((e) => short(e.type) === "turn.started" && (e.data.messages as string[]).some((m) => wanted.has(m))).map((e) => e.run!),
  );
  const allCalls = new Set<string>();
  const mine = new Set<string>();
  for (const e of events) {
    if (short(e.type) !== "round.saved") continue;
    for (const c of e.data.calls as { call: string }[]) {
      allCalls.add(c.call);
      if (runs.has(e.run!)) mine.add(c.call);
    }
  }
  return {
    events: events.filter(
      (e) => (e.run !== undefined && runs.has(e.run)) || (short(e.type) === "message.queued" && wanted.has(String(e.data.message))),
    ),
    log: log.filter((l) => mine.has(l.key) || !allCalls.has(l.key)),
  };
}
