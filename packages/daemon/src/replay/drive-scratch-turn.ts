import { shortType, TURN_END_TYPES } from "@wardrik/protocol";
import { parseStored } from "../store/state-error.js";
import type { PersonDecision } from "./recorded-calls.js";
import type { ScratchAgent } from "./scratch-agent.js";

/** A call the replay stopped at: the policy asks a person, and the record holds no decision for it. */
export interface WouldAsk {
  call: string;
  tool: string;
  args: unknown;
  reason: string;
}

export interface DrivenTurn {
  run: string;
  /** Empty unless the turn was stopped where a person would have been asked. */
  wouldAsk: WouldAsk[];
}

/**
 * Runs one turn of the scratch copy from `texts` to its end. When a call
 * waits for a person, the decision a person made for the same call in the
 * record is made again (approve, with the arguments they approved, or deny
 * with their reason); a call nobody decided in the record stops the turn
 * there (cancelled, reported as "would ask"): a replay never waits for a
 * person and never makes up a decision.
 */
export function driveScratchTurn(
  scratch: ScratchAgent,
  texts: readonly string[],
  decided: (tool: string, args: unknown) => PersonDecision | undefined,
  deadlineMs: number,
): Promise<DrivenTurn> {
  return new Promise((resolve, reject) => {
    let run: string | undefined;
    const wouldAsk: WouldAsk[] = [];
    const fail = (err: unknown) => {
      stop();
      clearTimeout(timer);
      reject(err instanceof Error ? err : new Error(String(err)));
    };
    const timer = setTimeout(() => {
      const stopAt = run;
      fail(new Error(`The replayed turn ${stopAt ?? ""} did not end within ${Math.round(deadlineMs / 1000)} s.`));
      if (stopAt) void scratch.runtime.cancel(scratch.row, scratch.conversation).catch(() => undefined);
    }, deadlineMs);
    const onParked = async (parked: string) => {
      const waiting = (await scratch.store.calls.waiting(scratch.row.id)).filter((c) => c.run === parked);
      for (const c of waiting) {
        const args = parseStored(c.args, `call ${c.id} arguments`);
        const d = decided(c.tool, args);
        if (!d) wouldAsk.push({ call: c.id, tool: c.tool, args, reason: c.reason ?? "the policy asks a person" });
      }
      if (wouldAsk.length > 0) {
        await scratch.runtime.cancel(scratch.row, scratch.conversation);
        return;
      }
      for (const c of waiting) {
        const d = decided(c.tool, parseStored(c.args, `call ${c.id} arguments`))!;
        if (d.approved) await scratch.runtime.approve(scratch.row, c.id, d.args);
        else await scratch.runtime.deny(scratch.row, c.id, d.reason);
      }
    };
    const stop = scratch.onEvent((e) => {
      const type = shortType(e.type);
      // One turn at a time runs in the copy: the first that starts after the messages were queued is theirs.
      if (type === "turn.started" && run === undefined) run = e.run;
      if (run === undefined || e.run !== run) return;
      if (type === "turn.parked") onParked(run).catch(fail);
      else if ((TURN_END_TYPES as readonly string[]).includes(type)) {
        stop();
        clearTimeout(timer);
        resolve({ run, wouldAsk });
      }
    });
    scratch.queue(texts).catch(fail);
  });
}
