/**
 * One fuzzed exchange with the daemon and what counts as a crash: a 5xx, a
 * connection dropped without an answer, no answer at all, or the daemon
 * gone. Every target (test/fuzz/targets/) returns an Outcome per exchange.
 */
import type { Random } from "./random.js";
import type { Known } from "./schema-values.js";

export interface Outcome {
  target: string;
  /** What was sent, briefly: `POST /v1/agents/{id}/messages`, `worker frames hello,result`. */
  request: string;
  /** `200`, `400`, ..., or a WebSocket `close_1008`; `error` when nothing came back. */
  status: string;
  /** Set when the exchange crashed: what happened. */
  crash?: string;
  /** With a crash: the request's URL (cut at 300 characters) and sizes, to find it again. */
  sent?: { url: string; url_chars: number; body_bytes: number; headers: string[] };
}

export interface FuzzContext {
  url: string;
  /** The admin token of org `default`. */
  token: string;
  /** A token of another org. */
  otherToken: string;
  known: Known;
  secrets: { slack: string; webhook: string; github: string };
  /** Whether the daemon process still runs. */
  alive(): boolean;
}

export interface FuzzTarget {
  name: string;
  once(r: Random, ctx: FuzzContext): Promise<Outcome>;
}

/** Longest wait for an answer; a stream answers with its headers and is then left. */
const ANSWER_TIMEOUT_MS = 30_000;

/** A bearer header of the org's, another org's, a bad one or none. */
export function authHeader(r: Random, ctx: FuzzContext): Record<string, string> {
  const roll = r.next();
  if (roll < 0.8) return { authorization: `Bearer ${ctx.token}` };
  if (roll < 0.88) return { authorization: `Bearer ${ctx.otherToken}` };
  if (roll < 0.94) return { authorization: r.pick(["Bearer nope", "Basic eDp5", "Bearer", `Bearer ${ctx.token} x`]) };
  return {};
}

/** Sends one HTTP request and classifies the answer. */
export async function httpExchange(ctx: FuzzContext, target: string, request: string, url: string, init: RequestInit): Promise<Outcome> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), ANSWER_TIMEOUT_MS);
  try {
    const res = await fetch(url, { ...init, signal: ac.signal });
    let body = "";
    if ((res.headers.get("content-type") ?? "").includes("text/event-stream")) await res.body?.cancel();
    else body = await res.text();
    const status = String(res.status);
    return res.status >= 500
      ? { target, request, status, crash: `answered ${status}: ${body.slice(0, 300)}` }
      : { target, request, status };
  } catch (err) {
    // A TypeError without a cause is fetch refusing the request before sending it: the fuzzer's own mistake.
    if (err instanceof TypeError && err.cause === undefined) throw err;
    const body = typeof init.body === "string" ? Buffer.byteLength(init.body) : 0;
    const sent = { url: url.slice(0, 300), url_chars: url.length, body_bytes: body, headers: Object.keys(init.headers ?? {}) };
    return { target, request, status: "error", crash: whyFailed(ctx, err, ac.signal.aborted), sent };
  } finally {
    clearTimeout(timer);
  }
}

/** Why an exchange got no answer: the daemon died, it did not answer in time, or it dropped the connection. */
export function whyFailed(ctx: FuzzContext, err: unknown, timedOut: boolean): string {
  if (!ctx.alive()) return "the daemon died";
  if (timedOut) return `no answer within ${ANSWER_TIMEOUT_MS / 1000} s`;
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return `the connection was dropped (${cause?.code ?? cause?.message ?? (err as Error).message})`;
}
