/**
 * Errors that cross a boundary (HTTP, WebSocket, the event log) carry a stable
 * code, a message that says what to fix, and whether retrying can help.
 */
export const ERROR_CODES = [
  "bad_request",
  "invalid_json",
  "json_too_deep",
  "body_too_large",
  "headers_too_large",
  "unauthorized",
  "not_found",
  "method_not_allowed",
  "conflict",
  "idempotency_conflict",
  "unreadable",
  "not_waiting",
  "rate_limited",
  "internal",
  "unavailable",
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

const MARKER = Symbol.for("wardrik.error");

export class WardrikError extends Error {
  readonly [MARKER] = true;
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly status: number;
  /** Seconds to wait before trying again (HTTP answers send it as `Retry-After`). */
  readonly retryAfter: number | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { retryable?: boolean; status?: number; retryAfter?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "WardrikError";
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.status = options.status ?? defaultStatus(code);
    this.retryAfter = options.retryAfter;
  }

  /** Works across bundles and package copies, unlike `instanceof`. */
  static isInstance(value: unknown): value is WardrikError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[MARKER] === true;
  }

  toJSON(): ErrorBody {
    return { error: { code: this.code, message: this.message, retryable: this.retryable } };
  }
}

export interface ErrorBody {
  error: { code: ErrorCode | string; message: string; retryable: boolean };
}

function defaultStatus(code: ErrorCode): number {
  switch (code) {
    case "bad_request":
    case "invalid_json":
    case "json_too_deep":
      return 400;
    case "unauthorized":
      return 401;
    case "not_found":
      return 404;
    case "method_not_allowed":
      return 405;
    case "conflict":
    case "not_waiting":
    case "unreadable":
      return 409;
    case "body_too_large":
      return 413;
    case "headers_too_large":
      return 431;
    case "idempotency_conflict":
      return 422;
    case "rate_limited":
      return 429;
    case "unavailable":
      return 503;
    case "internal":
      return 500;
  }
}
