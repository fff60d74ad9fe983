import { WardrikError } from "@wardrik/protocol/errors";
import { readSse, type SseMessage } from "./sse.js";
import { fetchTransport, isCutOff, NoAnswerError, type Transport, type TransportAnswer } from "./transport.js";

export interface ClientOptions {
  /**
   * The daemon's base URL, such as http://127.0.0.1:7373. Defaults to
   * WARDRIK_URL. Nodes of a cluster may be listed, separated by commas: a
   * request that cannot connect to one (so surely never reached it) goes to
   * the next.
   */
  url?: string | undefined;
  /**
   * A bearer token of one org. Defaults to WARDRIK_TOKEN. null: none, for the
   * few routes that take no token (trading a console sign-in code).
   */
  token?: string | null | undefined;
  /** The org to act in with the admin token (`Wardrik-Org`); the token's own when left out. */
  org?: string | undefined;
  /** How requests travel; `fetch` when left out. */
  transport?: Transport | undefined;
}

export interface RequestOptions {
  /** Sent as `Idempotency-Key`; the same on every retry of this request. Every POST gets a new one unless given; null: send none. */
  idempotencyKey?: string | null;
  /**
   * A time (ms since the epoch) by which the request has an answer or fails.
   * Until then connection errors, 5xx and retryable answers are retried (a
   * POST with the same key, so it runs once); an attempt still waiting then
   * is given up. None: one attempt, no time limit.
   */
  deadline?: number;
}

/** How an event stream is followed. */
export interface StreamOptions {
  /** Sent as Last-Event-ID on the first connection; later ones send the last event's id. */
  lastEventId?: string;
  signal?: AbortSignal;
  /** Told when the stream is connected and when it is connecting again after a drop. */
  onState?: (state: "live" | "reconnecting") => void;
  /** Connection failures in a row after which following fails; 30 when left out. */
  maxFailures?: number;
}

/** Told about each retry, so a program can say what it waits for. */
export type RetryListener = (attempt: number, error: WardrikError, elapsedMs: number) => void;

/** The status of an error that no daemon gave: the connection failed or broke before an answer. */
const NO_ANSWER = 0;
const RETRY_BASE_MS = 200;
const RETRY_CAP_MS = 2000;

/** True when no daemon answered at all (as opposed to a daemon answering with an error). */
export function isNoAnswer(e: WardrikError): boolean {
  return e.code === "unavailable" && e.status === NO_ANSWER;
}

const env = (name: string): string | undefined =>
  (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name];

/**
 * What every route of the client shares: the daemon's addresses, the token,
 * the org, requests with their retries and errors, and event streams with
 * their reconnections. Browser-safe: no node: module.
 */
export class ClientCore {
  protected readonly urls: string[];
  protected current = 0;
  readonly token: string | null;
  readonly org: string | undefined;
  protected readonly transport: Transport;
  onRetry: RetryListener | undefined;

  constructor(options: ClientOptions = {}) {
    const url = options.url ?? env("WARDRIK_URL");
    const token = options.token === null ? null : (options.token ?? env("WARDRIK_TOKEN"));
    if (!url) throw new WardrikError("bad_request", "No daemon URL: pass url or set WARDRIK_URL.");
    if (token === undefined || token === "") throw new WardrikError("unauthorized", "No token: pass token or set WARDRIK_TOKEN.");
    this.urls = url
      .split(",")
      .map((u) => u.trim().replace(/\/+$/, ""))
      .filter((u) => u !== "");
    if (this.urls.length === 0) throw new WardrikError("bad_request", `The daemon URL names no address: "${url}".`);
    this.token = token;
    this.org = options.org;
    this.transport = options.transport ?? fetchTransport;
  }

  /** The address in use: the first of the list, or the one that last answered. */
  get url(): string {
    return this.urls[this.current]!;
  }

  /** The headers of every request: the token, and the org the admin token acts in. */
  headers(extra: Record<string, string> = {}): Record<string, string> {
    return {
      ...(this.token !== null ? { authorization: `Bearer ${this.token}` } : {}),
      ...(this.org !== undefined ? { "wardrik-org": this.org } : {}),
      ...extra,
    };
  }

  /** One request to the API, retried until `options.deadline` when the failure is retryable; its JSON answer. */
  async request<T>(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<T> {
    const key = options.idempotencyKey === null ? undefined : (options.idempotencyKey ?? (method === "POST" ? newKey() : undefined));
    const started = Date.now();
    const deadline = options.deadline;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once<T>(method, path, body, key, deadline);
      } catch (err) {
        const e = WardrikError.isInstance(err) ? err : new WardrikError("internal", String(err));
        const left = deadline === undefined ? 0 : deadline - Date.now();
        if (!e.retryable || left <= 0) throw e;
        this.onRetry?.(attempt, e, Date.now() - started);
        const backoff = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** (attempt - 1));
        await new Promise((r) => setTimeout(r, Math.min(backoff * (0.5 + Math.random() / 2), left)));
        // No attempt with no time left: the last real error says more than "gave up".
        if (deadline !== undefined && Date.now() >= deadline) throw e;
      }
    }
  }

  private async once<T>(method: string, path: string, body: unknown, key: string | undefined, deadline?: number): Promise<T> {
    const signal = deadline === undefined ? undefined : AbortSignal.timeout(Math.max(0, deadline - Date.now()));
    let status: number;
    let text: string;
    let retryAfter: string | null;
    try {
      const res = await this.send(method, path, {
        headers: this.headers({
          ...(body !== undefined ? { "content-type": "application/json" } : {}),
          ...(key !== undefined ? { "idempotency-key": key } : {}),
        }),
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        ...(signal ? { signal } : {}),
      });
      status = res.status;
      retryAfter = res.header("retry-after");
      text = await res.text();
    } catch (err) {
      if (signal?.aborted)
        throw new WardrikError("unavailable", `The Wardrik daemon at ${this.url} did not answer before the deadline; gave up.`, {
          retryable: true,
          status: NO_ANSWER,
        });
      throw this.unreachable(err);
    }
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      if (status < 200 || status > 299) throw WardrikError.fromResponse(status, undefined, retryAfterOf(retryAfter));
      throw new WardrikError("internal", `The daemon answered ${status} with a body that is not JSON.`, { retryable: status >= 500 });
    }
    if (status < 200 || status > 299) throw WardrikError.fromResponse(status, json, retryAfterOf(retryAfter));
    if (json === undefined && status !== 204)
      throw new WardrikError("internal", `The daemon answered ${status} with an empty body.`, { retryable: true });
    return json as T;
  }

  /** Sends to the address in use, moving to the next one only when a connection is refused (the request surely never arrived). */
  private async send(method: string, path: string, init: { headers: Record<string, string>; body?: string; signal?: AbortSignal }) {
    for (let tried = 1; ; tried++) {
      try {
        return await this.transport({ method, url: this.url + path, ...init });
      } catch (err) {
        if (tried >= this.urls.length || !(err instanceof NoAnswerError) || err.code !== "ECONNREFUSED") throw err;
        this.current = (this.current + 1) % this.urls.length;
      }
    }
  }

  private unreachable(err: unknown): WardrikError {
    if (WardrikError.isInstance(err)) return err;
    const cause = err instanceof NoAnswerError ? err.code : (err as Error).message;
    return new WardrikError("unavailable", `Cannot reach the Wardrik daemon at ${this.url}: ${cause}. Is \`wardrik daemon\` running?`, {
      retryable: true,
      status: NO_ANSWER,
    });
  }

  /**
   * Follows an event stream (`path`, server-sent events) until the signal
   * aborts: after a dropped connection (a daemon restart) it connects again
   * with Last-Event-ID, so no event is missed. An answer that is not a
   * success fails it, unless retryable (a daemon starting or draining).
   */
  async *stream(path: string, options: StreamOptions = {}): AsyncGenerator<SseMessage> {
    let last = options.lastEventId;
    let failures = 0;
    const maxFailures = options.maxFailures ?? 30;
    while (!options.signal?.aborted) {
      let res: TransportAnswer;
      try {
        res = await this.transport({
          method: "GET",
          url: this.url + path,
          headers: this.headers({ accept: "text/event-stream", ...(last !== undefined ? { "last-event-id": last } : {}) }),
          ...(options.signal ? { signal: options.signal } : {}),
        });
        if (res.status < 200 || res.status > 299) {
          const refused = WardrikError.fromResponse(res.status, parseOrUndefined(await res.text()));
          if (!refused.retryable) throw refused;
          throw new NoAnswerError(String(res.status), refused.message);
        }
      } catch (err) {
        if (options.signal?.aborted) return;
        if (!(err instanceof NoAnswerError)) throw err;
        if (++failures > maxFailures) throw this.unreachable(err);
        options.onState?.("reconnecting");
        await new Promise((r) => setTimeout(r, Math.min(2000, 100 * failures)));
        continue;
      }
      failures = 0;
      options.onState?.("live");
      try {
        for await (const message of readSse(res.body)) {
          if (message.id !== undefined) last = message.id;
          yield message;
        }
      } catch (err) {
        if (options.signal?.aborted) return;
        // A connection cut mid-stream (a daemon restart): follow again from the last event.
        if (!isCutOff(err)) throw err;
      }
      if (options.signal?.aborted) return;
      options.onState?.("reconnecting");
    }
  }
}

/** A new Idempotency-Key: a random UUID (also in a page that is not a secure context, where randomUUID is missing). */
function newKey(): string {
  const c = globalThis.crypto;
  if (typeof c.randomUUID === "function") return c.randomUUID();
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Retry-After in seconds (the daemon sends seconds, never a date). */
function retryAfterOf(header: string | null): number | undefined {
  const seconds = header === null ? NaN : Number(header);
  return Number.isFinite(seconds) ? seconds : undefined;
}
