/**
 * Errors that cross a boundary (HTTP, WebSocket, the event log) carry a stable
 * code, a message that says what to fix, and whether retrying can help. Over
 * HTTP they travel as RFC 9457 problem documents (see ProblemDocument).
 * `@wardrik/protocol/errors` is this module alone, with nothing else to load:
 * the SDK's client and the CLI import it so.
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

  /** The error as an RFC 9457 problem document; `instance` is the request's path, when there was a request. */
  toJSON(instance?: string): ProblemDocument {
    return {
      type: "about:blank",
      title: statusTitle(this.status),
      status: this.status,
      detail: this.message,
      ...(instance === undefined ? {} : { instance }),
      code: this.code,
      retryable: this.retryable,
    };
  }

  /**
   * The error an HTTP answer carries: its problem document's `code`, `detail`
   * and `retryable`, or, for a body that is not one (a proxy's page), the
   * status alone (retryable when it is a 5xx).
   */
  static fromResponse(status: number, body: unknown, retryAfter?: number): WardrikError {
    const p = (typeof body === "object" && body !== null ? body : {}) as Partial<Record<keyof ProblemDocument, unknown>>;
    const code = typeof p.code === "string" ? (p.code as ErrorCode) : "internal";
    const detail =
      typeof p.detail === "string" ? p.detail : `The daemon answered HTTP ${status}${typeof p.title === "string" ? ` (${p.title})` : ""}.`;
    const retryable = typeof p.retryable === "boolean" ? p.retryable : status >= 500;
    return new WardrikError(code, detail, { status, retryable, ...(retryAfter === undefined ? {} : { retryAfter }) });
  }
}

/** The media type of every error answer of the HTTP API (RFC 9457). */
export const PROBLEM_CONTENT_TYPE = "application/problem+json";

/**
 * An error answer of the HTTP API, by RFC 9457. `type` is `about:blank` (the
 * problem is what the status says) and `title` the status's reason phrase;
 * `code` names the problem precisely and `retryable` says whether the same
 * request may succeed later (both extension members).
 */
export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  /** What is wrong, and how to fix it. */
  detail: string;
  /** The path of the request that failed. */
  instance?: string;
  code: ErrorCode | string;
  retryable: boolean;
}

const STATUS_TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  413: "Content Too Large",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/** The reason phrase of an HTTP status (RFC 9110), which an `about:blank` problem's title repeats. */
function statusTitle(status: number): string {
  return STATUS_TITLES[status] ?? (status >= 500 ? "Server Error" : "Client Error");
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
