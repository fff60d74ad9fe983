import { OptionalModuleError } from "../../optional-modules.js";
import { loadedMcpClientSdk } from "./load-mcp-client-sdk.js";

/**
 * What went wrong talking to a server, sorted by what it means for a call:
 * - `closed`: the session ended (process exited, transport closed);
 * - `timeout`: no answer in time;
 * - `refused`: the server answered with a JSON-RPC error (it is up);
 * - `unreachable`: the request never reached the server (connection refused, unknown host, expired session);
 * - `transport`: the connection failed mid-request;
 * - `invalid`: the server answered with something that is not a valid MCP result.
 */
export type FailureKind = "closed" | "timeout" | "refused" | "unreachable" | "transport" | "invalid";

export interface Failure {
  kind: FailureKind;
  detail: string;
}

const UNREACHABLE_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

export function classifyFailure(err: unknown): Failure {
  // Without the SDK loaded, no error can be one of its own.
  const sdk = loadedMcpClientSdk();
  if (sdk && err instanceof sdk.McpError) {
    const { ErrorCode } = sdk;
    if (err.code === ErrorCode.ConnectionClosed) return { kind: "closed", detail: "the connection closed" };
    if (err.code === ErrorCode.RequestTimeout) return { kind: "timeout", detail: "no answer in time" };
    return { kind: "refused", detail: err.message };
  }
  if (sdk && err instanceof sdk.StreamableHTTPError) {
    const status = err.code ?? -1;
    // 404: the server forgot the session (it restarted); 401/403: the headers do not authorise us.
    const unreachable = status === 404 || status === 401 || status === 403;
    return { kind: unreachable ? "unreachable" : "transport", detail: err.message.replace(/^Streamable HTTP error: /, "") };
  }
  const code = systemCode(err);
  if (code && UNREACHABLE_CODES.has(code)) return { kind: "unreachable", detail: `${code} (${messageOf(err)})` };
  if (code || (err instanceof TypeError && /fetch failed|network|socket/i.test(err.message))) {
    return { kind: "transport", detail: code ? `${code} (${messageOf(err)})` : messageOf(err) };
  }
  return { kind: "invalid", detail: messageOf(err) };
}

/** Why a server did not start, in words a person can act on. */
export function describeStartFailure(err: unknown, phase: "initialize" | "tools/list", timeoutMs: number, target: string): string {
  // The SDK itself is missing or broken: that, not the server, is what to fix.
  if (err instanceof OptionalModuleError) return err.message;
  const code = systemCode(err);
  if (code === "ENOENT") return `could not start ${target}: it was not found (check command and PATH)`;
  if (code === "EACCES") return `could not start ${target}: permission denied`;
  const f = classifyFailure(err);
  switch (f.kind) {
    case "timeout":
      return `${target} did not answer the MCP ${phase} request within ${seconds(timeoutMs)}`;
    case "closed":
      return `${target} exited during startup`;
    case "refused":
      return `${target} rejected the MCP ${phase} request: ${f.detail}`;
    case "unreachable":
    case "transport":
      return `could not reach ${target}: ${f.detail}`;
    case "invalid":
      return `${target} failed the MCP ${phase} request: ${f.detail}`;
  }
}

export function seconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

function systemCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^E[A-Z_]+$/.test(code)) return code;
  }
  return undefined;
}

function messageOf(err: unknown): string {
  const cause = (err as { cause?: unknown })?.cause;
  const base = err instanceof Error ? err.message : String(err);
  return cause instanceof Error && cause.message && !base.includes(cause.message) ? `${base}: ${cause.message}` : base;
}
