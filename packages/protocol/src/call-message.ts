import type { DaemonCall } from "./worker.js";

/**
 * Exactly what the DaemonCall schema accepts, checked by hand: calls are most
 * of what a worker hears, and a schema pass copies each one (its arguments
 * included) only for the worker to read a few fields. Unknown fields are left
 * in place rather than stripped; nothing reads them.
 */
export function isCallMessage(item: unknown): item is DaemonCall {
  if (!isRecord(item) || item.type !== "call") return false;
  const { callId, attempt, tool, ctx } = item;
  if (typeof callId !== "string" || callId.length === 0 || callId.length > 200) return false;
  if (typeof attempt !== "number" || !Number.isInteger(attempt) || attempt < 1) return false;
  // The schema wants the args key, whatever its value.
  if (typeof tool !== "string" || !("args" in item) || !isRecord(ctx) || Array.isArray(ctx)) return false;
  const { agent, run, idempotencyKey, timeoutMs, traceparent } = ctx;
  if (typeof agent !== "string" || typeof run !== "string" || typeof idempotencyKey !== "string") return false;
  if (typeof timeoutMs !== "number" || !Number.isInteger(timeoutMs) || timeoutMs < 0) return false;
  return traceparent === undefined || (typeof traceparent === "string" && traceparent.length <= 512);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
