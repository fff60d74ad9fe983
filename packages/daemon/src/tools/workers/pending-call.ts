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

export { LOST_ANSWER as LOST_MESSAGE } from "../../runtime/types.js";

/** "60 s", "0.2 s": how the model is told how long a call had. */
export function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}

/**
 * Open calls by ID. A null-prototype object rather than a Map: with one entry
 * added and removed per call, V8 chains a Map's retired hash tables to their
 * successors, the chain survives young-generation GCs and drags every call's
 * objects into the old generation (GC took a fifth of the daemon's time in the
 * tools benchmark).
 */
export class CallTable<T> {
  private table: Record<string, T> = Object.create(null) as Record<string, T>;
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(id: string): T | undefined {
    return this.table[id];
  }

  has(id: string): boolean {
    return this.table[id] !== undefined;
  }

  set(id: string, value: T): void {
    if (this.table[id] === undefined) this.count += 1;
    this.table[id] = value;
  }

  delete(id: string): void {
    if (this.table[id] === undefined) return;
    delete this.table[id];
    this.count -= 1;
    // Dictionaries never shrink; start afresh once empty so a burst does not pin memory.
    if (this.count === 0) this.table = Object.create(null) as Record<string, T>;
  }

  values(): T[] {
    return Object.values(this.table);
  }
}
