/**
 * Settling an agent after a crash, as its person would: approve each call
 * that waits because its answer was lost (and, when asked, each call a
 * policy asks about) until every accepted message's turn has ended; and
 * telling those asks apart. No vitest here: the benchmarks use it too.
 */
import { LOST_ANSWER } from "../../src/runtime/types.js";
import { sleep } from "../helpers/wait.js";
import { api, eventsOf, short, type FaultDaemon, type FaultEvent } from "./fault-api.js";

/** An approval asked because a call's answer was lost: the reason starts with LOST_ANSWER (then says where the call ran). */
export function isLostAnswer(e: FaultEvent): boolean {
  return typeof e.data.reason === "string" && e.data.reason.startsWith(LOST_ANSWER) && e.data.lost === true;
}

export interface SettleResult {
  /** Calls approved after their answer was lost (call ID -> times approved). */
  approved: Map<string, number>;
  /** approval.requested events with another reason than LOST_ANSWER, or not marked lost. */
  unexpectedApprovals: FaultEvent[];
  events: FaultEvent[];
}

/**
 * An approval a policy asked for (a rule decided `ask`), not one asked because
 * a call's answer was lost.
 */
export function isPolicyAsk(e: FaultEvent): boolean {
  return e.data.lost !== true && typeof e.data.rule === "string";
}

/**
 * The approvals granted for a call after its answer was lost (each allows one
 * more run), told apart from the grant of a policy's ask (which allows the first).
 */
export function lostAnswerGrants(callEvents: FaultEvent[]): number {
  let lastAsk: FaultEvent | undefined;
  let grants = 0;
  for (const e of [...callEvents].sort((a, b) => a.seq - b.seq)) {
    if (short(e.type) === "approval.requested") lastAsk = e;
    else if (short(e.type) === "approval.granted" && lastAsk && isLostAnswer(lastAsk)) grants += 1;
  }
  return grants;
}

/**
 * After a restart: approves every call that waits with the lost-answer reason
 * (and, with `policyAsks`, every call a policy rule asks about: the person),
 * until every accepted message's turn has ended. Returns all the agent's events.
 */
export async function settle(
  d: FaultDaemon,
  agentId: string,
  accepted: string[],
  timeoutMs = 30_000,
  opts: { policyAsks?: boolean } = {},
): Promise<SettleResult> {
  const approved = new Map<string, number>();
  const handled = new Set<number>();
  const unexpectedApprovals: FaultEvent[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await eventsOf(d, agentId);
    for (const e of events) {
      if (short(e.type) !== "approval.requested" || handled.has(e.seq)) continue;
      handled.add(e.seq);
      // Already answered (by the caller, before this settle).
      if (events.some((x) => x.seq > e.seq && x.data.call === e.data.call && /^approval\.(granted|denied)$/.test(short(x.type)))) continue;
      if (!isLostAnswer(e) && !(opts.policyAsks && isPolicyAsk(e))) {
        unexpectedApprovals.push(e);
        continue;
      }
      const call = String(e.data.call);
      try {
        await api(d, "POST", `/v1/agents/${agentId}/calls/${call}/approve`);
      } catch (err) {
        // Its answer came after all (a worker that kept the call delivered it late): nothing to approve.
        if (/answered 409: .*not_waiting/.test(String(err))) continue;
        throw err;
      }
      approved.set(call, (approved.get(call) ?? 0) + 1);
    }
    if (allEnded(events, accepted)) return { approved, unexpectedApprovals, events: await eventsOf(d, agentId) };
    if (Date.now() > deadline) {
      const open = accepted.filter((m) => !turnEndOf(events, m));
      throw new Error(`turns did not end within ${timeoutMs} ms after the restart; messages without an ended turn: ${open.join(", ")}`);
    }
    await sleep(50);
  }
}

function turnEndOf(events: FaultEvent[], message: string): FaultEvent | undefined {
  const run = events.find((e) => short(e.type) === "turn.started" && (e.data.messages as string[]).includes(message))?.run;
  return run === undefined ? undefined : events.find((e) => e.run === run && /^turn\.(completed|failed|cancelled)$/.test(short(e.type)));
}

function allEnded(events: FaultEvent[], accepted: string[]): boolean {
  return accepted.every((m) => turnEndOf(events, m) !== undefined);
}
