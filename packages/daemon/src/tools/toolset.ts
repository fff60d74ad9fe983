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
  /** Adds US dollars to the agent's spend; calls add up. */
  cost(usd: number): void;
  /** Milliseconds this call may take before it times out. */
  timeoutMs: number;
  /** W3C trace context of the call's span, when traces are exported: passed on to workers and MCP servers. */
  traceparent?: string | undefined;
  /** The policy decision the call runs under, as recorded (`allow`, `ask` once approved, `judge`): sent with a call forwarded to another node. */
  decision?: string | undefined;
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
    };

/** A worker's answer for a call nobody in this process waits for, or for an attempt older than the one now out. */
export interface LateAnswer {
  callId: string;
  /** The attempt it answers. */
  attempt: number;
  outcome: ToolOutcome;
}

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

/** The reason a call's signal carries, as one of the StopReasons ("killed" for anything else). */
export function stopReasonOf(signal: AbortSignal): StopReason {
  const r: unknown = signal.reason;
  return r instanceof CallStop ? r.why : "killed";
}

/** What kind of source a toolset is: the safe-to-repeat rule differs per kind. */
export type ToolsetKind = "files" | "workers" | "mcp" | "other";

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
   * Waits up to `timeoutMs` for the answer of a call a previous process
   * started (a worker that kept running it through a restart may deliver it);
   * undefined when none came.
   */
  awaitAnswer?(callId: string, scope: ToolScope, timeoutMs: number): Promise<ToolOutcome | undefined>;
  /**
   * Waits until the toolset can serve `tool` (a worker reconnecting after a
   * restart), up to `timeoutMs`. Recovery uses it instead of failing at once.
   */
  waitFor?(tool: string, scope: ToolScope, timeoutMs: number): Promise<boolean>;
  /** The agent fell asleep: release what it held (an MCP server no awake agent uses stops). */
  release?(scope: ToolScope): void | Promise<void>;
  /** Health of the toolset's sources, for `wardrik agent show` (MCP servers, workers). */
  status?(scope: ToolScope): { name: string; status: string; reason?: string }[];
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
