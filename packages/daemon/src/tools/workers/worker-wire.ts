/** The worker endpoint's wire-level checks: the bearer token, refusing an upgrade, and a result message's shape. */
import type { Duplex } from "node:stream";
import type { WorkerResult } from "@wardrik/protocol";

export function bearerToken(header: string | undefined): string | undefined {
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return m?.[1];
}

export function refuse(socket: Duplex, status: number, code: string, message: string, retryable = false): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ error: { code, message, retryable } });
  const text = { 401: "Unauthorized", 404: "Not Found", 500: "Internal Server Error", 503: "Service Unavailable" }[status] ?? "Error";
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Exactly what the WorkerResult schema accepts, checked by hand for the hot path. */
export function isResultMessage(item: unknown): item is WorkerResult {
  if (!isRecord(item) || item.type !== "result") return false;
  const { callId, attempt, ok } = item;
  if (typeof callId !== "string" || callId.length === 0 || callId.length > 200) return false;
  if (typeof attempt !== "number" || !Number.isInteger(attempt) || attempt < 1) return false;
  return ok === true || (ok === false && typeof item.error === "string");
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
