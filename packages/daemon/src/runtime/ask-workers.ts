import { LOST_ANSWER } from "@wardrik/protocol";
import type { CallRow } from "../store/rows.js";
import { stopReasonOf, type RecallAnswer, type WorkerRef } from "../tools/toolset.js";
import type { AgentDriver } from "./agent-driver.js";

/**
 * Before a call whose answer was lost goes to a person, and before an
 * approved re-run of such a call goes to a worker, the runtime asks the
 * processes that may have run it (every worker of the org, on any node)
 * whether one knows its idempotency key. Workers that connect until `until`
 * are asked too; one that runs the call now is waited for. Undefined when
 * the call's toolset cannot be asked (MCP servers, files); "killed" when a
 * person stopped the call meanwhile (the wait is a kill's target, as a run is).
 */
export async function askWorkers(
  d: AgentDriver,
  call: CallRow,
  until: number,
  turnSignal: AbortSignal,
): Promise<RecallAnswer | "killed" | undefined> {
  const toolset = d.tools.get(call.tool.slice(0, Math.max(0, call.tool.indexOf("/"))));
  if (!toolset?.recall) return undefined;
  const last = lastWorker(call);
  const controller = new AbortController();
  const onTurnAbort = () => controller.abort(turnSignal.reason);
  turnSignal.addEventListener("abort", onTurnAbort, { once: true });
  const release = d.calls.track(call.id, controller);
  try {
    const answer = await toolset.recall(
      {
        callId: call.id,
        idempotencyKey: call.idempotency_key,
        attempt: Math.max(1, call.attempts),
        until,
        runningMs: d.opts.toolTimeoutMs,
        lastInstance: last?.instance,
        signal: controller.signal,
      },
      { org: d.org, agentId: d.id },
    );
    const killed = controller.signal.aborted && !turnSignal.aborted && stopReasonOf(controller.signal) === "killed";
    return killed && !answer.known ? "killed" : answer;
  } finally {
    turnSignal.removeEventListener("abort", onTurnAbort);
    release();
  }
}

/** The worker process the call was last sent to, as the record has it. */
export function lastWorker(call: Pick<CallRow, "worker">): WorkerRef | undefined {
  if (!call.worker) return undefined;
  try {
    const w = JSON.parse(call.worker) as Partial<WorkerRef>;
    if (typeof w.name !== "string" || typeof w.instance !== "string") return undefined;
    return { name: w.name, instance: w.instance, ...(typeof w.node === "string" ? { node: w.node } : {}) };
  } catch {
    return undefined;
  }
}

/**
 * What a person is told about a call whose answer was lost: LOST_ANSWER, then
 * which worker process it was last sent to and whether that one is gone. A
 * gone worker may have died after the call's effect but before it recorded
 * the call finished (or kept no record): nothing can tell, and the person is
 * told so.
 */
export function lostReason(last: WorkerRef | undefined, answer: RecallAnswer | undefined): string {
  const unknownTo = answer && !answer.known ? answer.unknownTo : [];
  const others = unknownTo.filter((w) => w.instance !== last?.instance).length;
  const asked =
    others === 0
      ? ""
      : others === 1
        ? " The other connected worker does not know it."
        : ` None of the ${others} other connected workers knows it.`;
  if (!last) return `${LOST_ANSWER}${asked}`;
  const where = `worker ${last.name} (instance ${last.instance}${last.node ? `, node ${last.node}` : ""})`;
  const there = unknownTo.some((w) => w.instance === last.instance);
  const state = there
    ? "which is connected but does not know it (the call never reached it there)"
    : "which is gone: no worker connected now can say whether it finished the call, so approving may run it a second time";
  return `${LOST_ANSWER} It was last sent to ${where}, ${state}.${asked}`;
}
