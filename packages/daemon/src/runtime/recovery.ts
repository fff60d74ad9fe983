import type { CallState } from "./call-machine.js";
import { isFinalCall } from "./call-machine.js";
import type { ToolsetKind } from "../tools/toolset.js";

/**
 * The recovery rule: what a saved call becomes when a driver picks up a turn
 * it did not start itself (after a restart, or a takeover in a cluster).
 *
 * - final calls keep their result; it is replayed to the model, never re-run;
 * - waiting calls keep waiting for a person;
 * - planned calls (saved undecided by state format 1) are decided now;
 * - approved calls run: a person said so and they had not started;
 * - running calls may have run. Those safe to repeat run again with the same
 *   idempotency key (an agents/NAME call is: it finds its child turn again
 *   and answers with that turn's end). For any other whose process can outlive the daemon (a
 *   worker), the workers are asked whether one knows it, until the worker
 *   grace ends: one that ran it, or still runs it, gives its answer. Else, or
 *   when nobody can be asked (an MCP server), it goes to a person: "This call
 *   may have run, but its answer was lost."
 */
export type RecoveryAction = "replay" | "keep_waiting" | "decide" | "run" | "rerun" | "await_answer" | "ask";

export interface SavedCall {
  status: CallState;
  /** Safe to repeat (see isSafeToRepeat), decided when the round was saved. */
  retrySafe: boolean;
  /** The process running the call can outlive the daemon and send its answer later (worker tools). */
  answerMayArrive: boolean;
}

export function recoverCall(call: SavedCall): RecoveryAction {
  if (isFinalCall(call.status)) return "replay";
  switch (call.status) {
    case "waiting":
      return "keep_waiting";
    case "planned":
      return "decide";
    case "approved":
      return "run";
    default:
      if (call.retrySafe) return "rerun";
      return call.answerMayArrive ? "await_answer" : "ask";
  }
}

export interface ToolSafety {
  /** `files`, `workers`, or an MCP server's namespace. */
  namespace: string;
  kind: ToolsetKind;
  readOnly: boolean;
  idempotent: boolean;
}

/**
 * Whether a call may run again without a person after it may have run: the
 * seed's list, exactly. File tools (reads, and writes whose effect commits
 * with their result, so an unfinished one had no effect), read-only MCP tools,
 * and read-only or idempotent worker tools. An MCP `idempotentHint` alone is
 * not enough: the server's hint is not a promise about our idempotency key.
 */
export function isSafeToRepeat(tool: ToolSafety): boolean {
  switch (tool.kind) {
    case "files":
    case "person":
    // Run again, an agents/NAME call finds the child turn its first attempt started (by the call's ID) and waits for it.
    case "agents":
      return true;
    case "workers":
      return tool.readOnly || tool.idempotent;
    case "mcp":
      return tool.readOnly;
    default:
      return tool.readOnly || tool.idempotent;
  }
}
