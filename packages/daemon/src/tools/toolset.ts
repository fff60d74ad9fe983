import type { Tx } from "../store/db.js";

/**
 * The toolset seam. A toolset (files, workers, one per MCP server) lists its
 * tools and runs calls; the registry maps `ns/tool` (agent files, policies)
 * to `ns__tool` (what the model sees).
 */
export interface ToolInfo {
  /** Full name `namespace/tool`. */
  name: string;
  description: string;
  title?: string;
  /** JSON Schema of the input (input side), as the model receives it. */
  inputSchema: Record<string, unknown>;
  /** Safe to run without approval by default, and safe to repeat. */
  readOnly: boolean;
  /** Safe to repeat with the same idempotency key. */
  idempotent: boolean;
}

export interface ToolCallContext {
  /** The calling agent's ID (set by Wardrik, never by the model). */
  agent: string;
  org: string;
  /** The turn's ID, as in its events. */
  run: string;
  callId: string;
  /** The same on every attempt of this call. */
  idempotencyKey: string;
  /** Which attempt this is: 1, and one more each time the call is started again. */
  attempt: number;
  /** Aborts when the call is killed, its turn cancelled, or it times out; the reason is a CallStop. */
  signal: AbortSignal;
  /**
   * The same stop without an AbortSignal (the runtime makes its call's signal
   * only when a toolset reads it): what a toolset on the hot path listens to.
   * Absent from callers that have only a signal (see stopWatchOf).
   */
  stop?: CallStopWatch | undefined;
  /** Adds US dollars to the agent's spend; calls add up. */
  cost(usd: number): void;
  /** Milliseconds this call may take before it times out. */
  timeoutMs: number;
  /** W3C trace context of the call's span, when traces are exported: passed on to workers and MCP servers. */
  traceparent?: string | undefined;
  /** The policy decision the call runs under, as recorded (`allow`, `ask` once approved, `judge`): sent with a call forwarded to another node. */
  decision?: string | undefined;
  /**
   * Asked right before the call leaves for a process that runs it (a worker,
   * or another node's worker), with whether it waited here for one first:
   * false when it must not go any more (the node that sends it no longer
   * drives its agent, or the record no longer shows this attempt running),
   * because a worker may run it after another node had run and stored it.
   * `true` at once in the common case, so a call that may go goes with no wait.
   */
  mayStart?: ((waited: boolean) => true | Promise<boolean>) | undefined;
}

export type ToolOutcome =
  | { ok: true; output: unknown }
  | {
      ok: false;
      error: string;
      /**
       * `lost`: the call may have run but its answer was lost (a worker went away
       * mid-call). The runtime treats it like an interrupted call in recovery.
       */
      kind?: "failed" | "timeout" | "killed" | "lost" | "unavailable";
      /**
       * With `lost`: the node the call was sent to died with it (a cluster).
       * Its worker moves to another node, so the grace to find it starts now;
       * a worker that left this node was already waited for.
       */
      nodeGone?: string;
    };

/** A worker's answer for a call nobody in this process waits for, or for an attempt older than the one now out. */
export interface LateAnswer {
  callId: string;
  /** The attempt it answers. */
  attempt: number;
  outcome: ToolOutcome;
}

/** A worker process as the record names it: its display name and the SDK instance (one per process). */
export interface WorkerRef {
  name: string;
  instance: string;
  /** The node it was connected to, in a cluster. */
  node?: string | undefined;
}

/** A question to the workers of an org: does one of you know this call's idempotency key? */
export interface RecallQuestion {
  callId: string;
  idempotencyKey: string;
  /** The attempt on record: a plain answer of an earlier attempt does not settle the call. */
  attempt: number;
  /** Workers that connect until then (ms since the epoch) are asked too; already past, the connected ones are asked once. */
  until: number;
  /** How long to wait for the answer of a worker that runs the call now. */
  runningMs: number;
  /** The worker instance the call was last sent to: once it says it does not know the call, nobody else is waited for. */
  lastInstance?: string | undefined;
  signal?: AbortSignal | undefined;
}

/** What the workers know of a call: its outcome when one ran it, else which workers said they do not know it. */
export type RecallAnswer =
  { known: true; outcome: ToolOutcome; attempt: number; worker?: WorkerRef | undefined } | { known: false; unknownTo: WorkerRef[] };

export interface ToolScope {
  org: string;
  agentId: string;
}

/** Why a call's signal aborted. */
export type StopReason = "killed" | "timeout" | "cancelled" | "shutdown";

/** The AbortSignal reason of a stopped call. */
export class CallStop extends Error {
  constructor(readonly why: StopReason) {
    super(`call stopped: ${why}`);
  }
}

/** A call's stop: why it stopped (undefined while it runs), and a way to hear it once it does. */
export interface CallStopWatch {
  readonly reason: CallStop | undefined;
  /** Calls `listener` once when the call stops (soon, if it has already); returns what removes it. */
  onStop(listener: () => void): () => void;
}

/** The reason a call's signal carries, as one of the StopReasons ("killed" for anything else). */
export function stopReasonOf(signal: AbortSignal): StopReason {
  const r: unknown = signal.reason;
  return r instanceof CallStop ? r.why : "killed";
}

/** What kind of source a toolset is: the safe-to-repeat rule differs per kind. */
export type ToolsetKind = "files" | "workers" | "mcp" | "person" | "agents" | "other";

export interface Toolset {
  readonly namespace: string;
  readonly kind?: ToolsetKind;
  /**
   * Whether agents of `org` may see and call this toolset at all; absent: every
   * org may. A toolset not offered to an org is, for that org, as if it did
   * not exist (MCP servers of config.yaml carry its org's credentials).
   */
  offeredTo?(org: string): boolean;
  /** Tools this toolset offers to the given agent's org right now. */
  list(scope: ToolScope): ToolInfo[] | Promise<ToolInfo[]>;
  /** Runs `tool` (the name without namespace). Never throws for a tool failure: returns `ok: false`. */
  call(tool: string, args: unknown, ctx: ToolCallContext): Promise<ToolOutcome>;
  /**
   * Runs the call inside the transaction that stores its result, so its
   * effect and its result commit together (or not at all): such a call can
   * never be left "may have run".
   */
  callInTransaction?(tx: Tx, tool: string, args: unknown, ctx: ToolCallContext): Promise<ToolOutcome>;
  /**
   * Asks the processes that may have run a call whose answer was lost (every
   * connected worker of the org, on any node) whether they know it: a worker
   * that ran it answers with its result, one that runs it now with its answer
   * once it ends. A call a previous process started is settled the same way
   * when its worker delivers the answer it kept.
   */
  recall?(question: RecallQuestion, scope: ToolScope): Promise<RecallAnswer>;
  /**
   * Waits until the toolset can serve `tool` (a worker reconnecting after a
   * restart), up to `timeoutMs`. Recovery uses it instead of failing at once.
   */
  waitFor?(tool: string, scope: ToolScope, timeoutMs: number): Promise<boolean>;
  /**
   * Calls of this toolset have no call timeout of their own: something else
   * bounds them (an agents/NAME call lasts as long as its child turn, which
   * its own timeout ends).
   */
  readonly untimed?: boolean;
  /** The agent fell asleep: release what it held (an MCP server no awake agent uses stops). */
  release?(scope: ToolScope): void | Promise<void>;
  /** Health of the toolset's sources, for `wardrik agent show` (MCP servers, workers). */
  status?(scope: ToolScope): { name: string; status: string; reason?: string }[];
  /** Who serves `tool` now, one entry per worker connection or node (for `wardrik tools`). */
  servers?(scope: ToolScope, tool: string): string[];
  /** Tools the source offers but Wardrik does not pass to models, and why (for `wardrik tools`). */
  skipped?(scope: ToolScope): { tool: string; reason: string }[];
}

export const MODEL_NAME_SEPARATOR = "__";

export function toModelToolName(fullName: string): string {
  const slash = fullName.indexOf("/");
  return slash < 0 ? fullName : fullName.slice(0, slash) + MODEL_NAME_SEPARATOR + fullName.slice(slash + 1);
}

export function fromModelToolName(modelName: string): string {
  const sep = modelName.indexOf(MODEL_NAME_SEPARATOR);
  return sep < 0 ? modelName : modelName.slice(0, sep) + "/" + modelName.slice(sep + MODEL_NAME_SEPARATOR.length);
}
