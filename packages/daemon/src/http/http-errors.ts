import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { z } from "zod";
import { PROBLEM_CONTENT_TYPE, WardrikError } from "@wardrik/protocol";
import { ConfigError } from "../config/index.js";
import { MAX_BODY_BYTES } from "./limits.js";

/** Where a request value came from, for messages that say where to look. */
export type InputPart = "body" | "query" | "path" | "header";

/** Every error answer of a route: a problem document (RFC 9457) for the request's path, with the headers its status calls for. */
export function errorResponse(c: Context, err: WardrikError, headers: Record<string, string> = {}): Response {
  const answer = problemAnswer(err, c.req.path, headers);
  return c.body(answer.body, err.status as 400, answer.headers);
}

/**
 * The one place an error answer is written, also for answers made before a
 * route sees the request (http-listener.ts): the problem document and its
 * headers (content type, WWW-Authenticate for 401, Retry-After when known).
 */
export function problemAnswer(
  err: WardrikError,
  instance?: string,
  headers: Record<string, string> = {},
): { body: string; headers: Record<string, string> } {
  const extra: Record<string, string> = { "content-type": PROBLEM_CONTENT_TYPE, ...headers };
  if (err.status === 401 && !extra["WWW-Authenticate"]) extra["WWW-Authenticate"] = 'Bearer realm="wardrik"';
  if (err.retryAfter !== undefined && !extra["Retry-After"]) extra["Retry-After"] = String(Math.max(1, Math.ceil(err.retryAfter)));
  return { body: JSON.stringify(err.toJSON(instance)), headers: extra };
}

export function toWardrikError(err: unknown): WardrikError {
  if (WardrikError.isInstance(err)) return err;
  if (err instanceof z.ZodError) return new WardrikError("bad_request", `Invalid request: ${describeIssues("body", err.issues)}`);
  if (err instanceof ConfigError) return new WardrikError("bad_request", err.message);
  if (err instanceof HTTPException) {
    if (err.status === 413) return bodyTooLarge();
    if (err.status < 500) return new WardrikError("bad_request", err.message || "The request is malformed.", { status: err.status });
  }
  const status = (err as { status?: unknown }).status;
  if (status === 413) return bodyTooLarge();
  return new WardrikError("internal", `Internal error: ${err instanceof Error ? err.message : String(err)}`, { retryable: true });
}

export function bodyTooLarge(): WardrikError {
  return new WardrikError("body_too_large", `The body is larger than ${MAX_BODY_BYTES} bytes (2 MiB); send less.`);
}

/**
 * Zod issues as one sentence that names each offending key with where it was:
 * `body.conversation: ...`, `unknown query parameter "limt" (this route takes after, limit)`.
 */
export function describeIssues(part: InputPart, issues: readonly z.core.$ZodIssue[], known: readonly string[] = []): string {
  return issues.map((issue) => describeIssue(part, issue, known)).join("; ");
}

function describeIssue(part: InputPart, issue: z.core.$ZodIssue, known: readonly string[]): string {
  const at = issue.path.map(String);
  if (issue.code === "unrecognized_keys") {
    const keys = issue.keys.map((k) => JSON.stringify(k)).join(", ");
    const plural = issue.keys.length > 1 ? "s" : "";
    if (part === "query") {
      return `unknown query parameter${plural} ${keys} (${known.length ? `this route takes ${known.join(", ")}` : "this route takes no query parameters"})`;
    }
    if (part === "body" && at.length === 0) {
      return `unknown key${plural} ${keys} in the body (${known.length ? `this route takes ${known.join(", ")}` : "this route takes no body, or {}"})`;
    }
    return `unknown key${plural} ${keys} in ${label(part, at)}`;
  }
  return `${label(part, at)}: ${issue.message}`;
}

function label(part: InputPart, at: string[]): string {
  switch (part) {
    case "body":
      return at.length ? `body.${at.join(".")}` : "body";
    case "query":
      return `query parameter ${at[0] ?? ""}`.trim();
    case "path":
      return `path parameter ${at[0] ?? ""}`.trim();
    case "header":
      return `header ${at[0] ?? ""}`.trim();
  }
}
