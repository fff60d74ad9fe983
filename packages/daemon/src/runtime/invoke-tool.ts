import type { CallRow, TurnRow } from "../store/rows.js";
import type { ResolvedTool } from "../tools/tool-registry.js";
import { CallStopper, withStopSignal } from "../tools/call-stopper.js";
import { CallStop, type ToolOutcome } from "../tools/toolset.js";
import type { AgentDriver } from "./agent-driver.js";
import { TurnStop } from "./engine-options.js";

/**
 * One attempt of a call through its toolset. The runtime owns the timeout and
 * every way a call stops: the stop it hands the toolset (and its signal,
 * made only when a toolset reads it) carries a CallStop that says why (a
 * person's kill, the timeout, the turn ending, the daemon stopping), and a
 * toolset that ignores it cannot hold the turn.
 */
export async function invokeTool(
  d: AgentDriver,
  turn: TurnRow,
  call: CallRow,
  tool: ResolvedTool,
  args: unknown,
  attempt: number,
  turnSignal: AbortSignal,
  traceparent?: string,
): Promise<{ outcome: ToolOutcome; cost: number }> {
  const controller = new CallStopper();
  const onTurnAbort = () => controller.abort(new CallStop(turnStopReason(turnSignal)));
  turnSignal.addEventListener("abort", onTurnAbort, { once: true });
  // The turn may have stopped while the call was being started (its commit, a wait for its tool): a signal that has
  // fired already fires no listener, and the call would go out and hold the turn's runner until its timeout.
  if (turnSignal.aborted) onTurnAbort();
  const release = d.calls.track(call.id, controller);
  const timeoutMs = d.opts.toolTimeoutMs;
  const timer = tool.toolset.untimed ? undefined : setTimeout(() => controller.abort(new CallStop("timeout")), timeoutMs);
  let cost = 0;
  let outcome: ToolOutcome;
  try {
    outcome = controller.reason
      ? stoppedOutcome(controller, tool.name, timeoutMs)
      : await Promise.race([
          tool.toolset.call(
            tool.local,
            args,
            withStopSignal({
              agent: d.id,
              org: d.org,
              run: turn.id,
              callId: call.id,
              idempotencyKey: call.idempotency_key,
              attempt,
              stop: controller,
              timeoutMs,
              traceparent,
              decision: call.decision ?? "allow",
              mayStart: d.mayStart,
              cost: (usd: number) => {
                if (Number.isFinite(usd) && usd > 0) cost += usd;
              },
            }),
          ),
          abortedOutcome(controller, tool.name, timeoutMs),
        ]);
  } catch (err) {
    outcome = { ok: false, kind: "failed", error: `The tool failed: ${err instanceof Error ? err.message : String(err)}` };
  } finally {
    clearTimeout(timer);
    turnSignal.removeEventListener("abort", onTurnAbort);
    release();
  }
  // A stop is reported in the runtime's words, whatever the toolset said and whichever of the two settled first.
  if (controller.reason && outcome.ok === false) {
    outcome = stoppedOutcome(controller, tool.name, timeoutMs);
  }
  return { outcome, cost };
}

function turnStopReason(turnSignal: AbortSignal): "cancelled" | "shutdown" {
  const r: unknown = turnSignal.reason;
  return r instanceof TurnStop && r.why === "shutdown" ? "shutdown" : "cancelled";
}

function stoppedOutcome(stop: CallStopper, tool: string, timeoutMs: number): ToolOutcome {
  const why = stop.reason?.why ?? "killed";
  if (why === "timeout") return { ok: false, kind: "timeout", error: `${tool} timed out after ${formatSeconds(timeoutMs)}.` };
  if (why === "killed") return { ok: false, kind: "killed", error: "A person stopped this call before it finished." };
  return { ok: false, kind: "killed", error: `${tool} was stopped because its turn ended before it finished.` };
}

/** Settles when the call stops, so a toolset that ignores its stop cannot hold a turn. */
function abortedOutcome(stop: CallStopper, tool: string, timeoutMs: number): Promise<ToolOutcome> {
  return new Promise((resolve) => stop.onStop(() => resolve(stoppedOutcome(stop, tool, timeoutMs))));
}

export function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}
