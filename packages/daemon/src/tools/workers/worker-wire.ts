/** The worker endpoint's wire-level checks: the bearer token, refusing an upgrade, reading a frame, and a result message's shape. */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { RawData } from "ws";
import {
  parseJsonWithin,
  PROBLEM_CONTENT_TYPE,
  WardrikError,
  WORKER_PATH,
  WorkerMessage,
  type ErrorCode,
  type WorkerResult,
} from "@wardrik/protocol";
import type { Logger } from "../../log/logger.js";

export interface UpgradeGate {
  closed(): boolean;
  /** Maps a worker token to its org; undefined refuses the connection. */
  authenticate(token: string): Promise<{ org: string } | undefined>;
  log: Logger;
}

/** Checks a worker's upgrade request (path, token) and calls `accept` with its org, or refuses it with a reason. */
export function checkUpgrade(req: IncomingMessage, socket: Duplex, gate: UpgradeGate, accept: (org: string) => void): void {
  const path = (req.url ?? "/").split("?")[0];
  if (path !== WORKER_PATH) return refuse(socket, 404, "not_found", `Workers connect to ${WORKER_PATH}.`);
  if (gate.closed()) return refuse(socket, 503, "unavailable", "The daemon is shutting down; reconnect later.", true);
  const token = bearerToken(req.headers.authorization);
  if (!token) return refuse(socket, 401, "unauthorized", "Send a worker token as `Authorization: Bearer TOKEN` (WARDRIK_TOKEN).");
  // The socket can fail while the token is checked; without a listener that error would crash the daemon.
  const onEarlyError = (): void => {
    socket.destroy();
  };
  socket.on("error", onEarlyError);
  gate.authenticate(token).then(
    (identity) => {
      socket.off("error", onEarlyError);
      if (socket.destroyed) return;
      if (!identity) return refuse(socket, 401, "unauthorized", "The token is not valid. Check WARDRIK_TOKEN.");
      if (gate.closed()) return refuse(socket, 503, "unavailable", "The daemon is shutting down; reconnect later.", true);
      accept(identity.org);
    },
    (err: unknown) => {
      socket.off("error", onEarlyError);
      gate.log("error", "worker authentication failed", { error: errorMessage(err) });
      refuse(socket, 500, "internal", "The daemon could not check the token; retry later.", true);
    },
  );
}

export function bearerToken(header: string | undefined): string | undefined {
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return m?.[1];
}

/** Refuses a worker's upgrade request with the API's problem document. */
export function refuse(socket: Duplex, status: number, code: ErrorCode, message: string, retryable = false): void {
  if (socket.destroyed) return;
  const problem = new WardrikError(code, message, { status, retryable }).toJSON(WORKER_PATH);
  const body = JSON.stringify(problem);
  socket.end(
    `HTTP/1.1 ${status} ${problem.title}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * A frame's messages (one, or a JSON array of them) and its size, or what is
 * wrong with it. Parsed within the depth limit before anything else reads
 * it: results are measured, redacted and stored by recursive code.
 */
export function readFrame(data: RawData, isBinary: boolean, maxDepth: number): { items: unknown[]; bytes: number } | { problem: string } {
  if (isBinary) return { problem: "Send JSON text frames, not binary ones." };
  const text = data.toString();
  let parsed: unknown;
  try {
    parsed = parseJsonWithin(text, { maxDepth }, "The message");
  } catch (err) {
    return { problem: errorMessage(err) };
  }
  const bytes = Buffer.isBuffer(data) ? data.length : Buffer.byteLength(text);
  return { items: Array.isArray(parsed) ? parsed : [parsed], bytes };
}

/** Exactly what the WorkerResult schema accepts, checked by hand for the hot path. */
export function isResultMessage(item: unknown): item is WorkerResult {
  if (!isRecord(item) || item.type !== "result") return false;
  const { callId, attempt, ok } = item;
  if (typeof callId !== "string" || callId.length === 0 || callId.length > 200) return false;
  if (typeof attempt !== "number" || !Number.isInteger(attempt) || attempt < 1) return false;
  return ok === true || (ok === false && typeof item.error === "string");
}

/**
 * Hands a frame's messages on in order, results (most of the traffic) on a hand check of their shape, which spares
 * a schema pass and a copy. After a malformed message only the frame's results are taken (their answers are not
 * lost; before the greeting there are none). Returns what was malformed, for closing the connection.
 */
export function takeItems(
  items: readonly unknown[],
  conn: { readonly gone: boolean; readonly greeted: boolean },
  onResult: (result: WorkerResult) => void,
  onMessage: (message: WorkerMessage) => void,
): string | undefined {
  let malformed: string | undefined;
  for (let i = 0; i < items.length && !conn.gone; i++) {
    const item = items[i];
    if (conn.greeted && isResultMessage(item)) {
      onResult(item);
      continue;
    }
    if (malformed !== undefined) continue;
    const parsed = WorkerMessage.safeParse(item);
    if (parsed.success) onMessage(parsed.data);
    else malformed = malformedMessage(item, parsed.error.issues, i, items.length);
  }
  return malformed;
}

/** What the worker reads when a message fails the schema: its type, its place in a frame of several, and the issues. */
export function malformedMessage(
  item: unknown,
  issues: readonly { path: PropertyKey[]; message: string }[],
  index: number,
  count: number,
): string {
  const type = isRecord(item) && typeof item.type === "string" ? `"${item.type}" ` : "";
  const where = count > 1 ? ` (item ${index + 1} of the ${count} in its frame)` : "";
  const what = issues.map((i) => (i.path.length ? `${i.path.map(String).join(".")}: ${i.message}` : i.message)).join("; ");
  return `Malformed ${type}message${where}: ${what}`;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
