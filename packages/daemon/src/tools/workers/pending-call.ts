import type { ToolCallContext, ToolOutcome } from "../toolset.js";
import type { WorkerConnection } from "./worker-connection.js";

/** A call the gateway has accepted and not yet answered. */
export interface PendingCall {
  readonly tool: string;
  readonly args: unknown;
  readonly ctx: ToolCallContext;
  readonly deadline: number;
  /** readOnly or idempotent: may be sent again when its worker is lost. */
  retryable: boolean;
  attempt: number;
  /** The worker running the current attempt; undefined while waiting for one. */
  worker: WorkerConnection | undefined;
  done: boolean;
  timer: NodeJS.Timeout | undefined;
  onAbort: () => void;
  resolve: (outcome: ToolOutcome) => void;
}

export const LOST_MESSAGE = "This call may have run, but its answer was lost.";

/** "60 s", "0.2 s": how the model is told how long a call had. */
export function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}
