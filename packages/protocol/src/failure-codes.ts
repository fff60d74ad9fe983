/**
 * Why a call, model call or turn did not succeed, as a stable code on its
 * event. The message says the details; the code lets a program react.
 */
export const FAILURE_CODES = [
  /** The tool ran and threw, or returned an error. */
  "tool_error",
  /** The model's arguments were not valid (JSON or schema). */
  "invalid_args",
  /** The model named a tool the agent cannot use. */
  "unknown_tool",
  /** No worker process serves the tool. */
  "no_worker",
  /** The tool's result could not be stored (not JSON, too large). */
  "bad_result",
  /** The call or turn passed its time limit. */
  "timeout",
  /** A person stopped the call. */
  "killed",
  /** A person cancelled the turn. */
  "cancelled",
  /** The turn ended while the call was open. */
  "turn_ended",
  /** The call's answer was lost (worker or node gone mid-call). */
  "lost",
  /** A policy or a person refused the call. */
  "denied",
  /** A budget cap would be passed. */
  "budget",
  /** The model call failed (after its retries). */
  "model_error",
  /** The turn used its max_iterations without a final answer. */
  "max_iterations",
  /** The final reply never fit the agent's `output` schema, repairs included. */
  "bad_output",
  /** The agent was removed. */
  "agent_removed",
  /** Something unexpected inside Wardrik. */
  "internal",
] as const;
export type FailureCode = (typeof FAILURE_CODES)[number];

/** Whether the same thing, tried again later, could succeed. */
export function isRetryableFailure(code: FailureCode): boolean {
  return code === "timeout" || code === "no_worker" || code === "lost" || code === "model_error" || code === "internal";
}
