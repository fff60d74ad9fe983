import { seconds } from "./describe-failure.js";
import type { McpConnection } from "./mcp-connection.js";

/** A server that is down: why, the connection that failed (its stderr may still be arriving), when to retry. */
export interface DownState {
  kind: "down";
  reason: string;
  conn?: McpConnection;
  retryAt: number;
}

/** Why a connection ended that nobody closed. */
export function closedReason(conn: McpConnection): string {
  if (!conn.isStdio) return `the connection to ${conn.target} closed`;
  const exit = conn.exitText();
  return `the server process exited${exit ? ` (${exit})` : ""}`;
}

/** The server's last stderr lines: as a block for the model, or on one line for `agent show`. */
export function stderrSuffix(conn: McpConnection, form: "block" | "line" = "block"): string {
  const tail = conn.stderrTail();
  if (!tail) return "";
  return form === "block" ? `; its stderr ended with:\n${tail}` : `; its stderr ended with: ${tail.split("\n").slice(-3).join(" | ")}`;
}

export function reasonOf(s: DownState, form: "block" | "line" = "block"): string {
  return s.conn ? s.reason + stderrSuffix(s.conn, form) : s.reason;
}

export function downMessage(namespace: string, s: DownState): string {
  return `MCP server "${namespace}" is down: ${reasonOf(s)}\n(${retryText(s.retryAt)})`;
}

export function retryText(retryAt: number): string {
  const wait = retryAt - Date.now();
  return wait > 0
    ? `Wardrik will try to start it again on the next use after ${seconds(Math.ceil(wait / 100) * 100)}`
    : "Wardrik will try to start it again on the next use";
}

/** Settles with `p`, or rejects with the signal's reason as soon as it aborts. */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e as Error);
      },
    );
  });
}
