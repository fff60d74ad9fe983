import { createHash, randomUUID } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { z } from "zod";
import { WardrikError } from "@wardrik/protocol";
import { IDEMPOTENCY_TTL_MS, type IdempotencyKeys } from "../store/idempotency-keys.js";
import type { ApiEnv } from "./api-env.js";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
export const REPLAYED_HEADER = "Idempotent-Replayed";

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
const PURGE_EVERY_MS = 10 * 60 * 1000;

/**
 * POSTs whose answer must not be stored: a console sign-in link is shown
 * once (storing the answer would keep it in plain text), and setting a secret
 * is an upsert that is safe to repeat anyway (its body is not kept, not even
 * hashed).
 */
const NOT_STORED = [/^\/v1\/secrets\//, /^\/v1\/console\//];
/**
 * POSTs that refuse a key. A token's secret is shown once and only its hash
 * is kept, so a retry could not be given the same token: it would either mint
 * a second one (the key broken) or keep the secret in plain text. A clear
 * 400 says so instead, and nothing is minted.
 */
const KEY_REFUSED = /^\/v1\/tokens$/;
/**
 * POSTs whose route stores its answer in the transaction that does its work
 * (`storeAnswerIn`): while the key has no answer, the work has not
 * committed. A retry may then take the key over from a daemon process that
 * died while serving it and run the request; should that process still be
 * serving it (another node), its transaction finds the key taken and rolls
 * back. Either way the work is done once.
 */
const ANSWER_WITH_WORK = [/^\/v1\/agents\/[^/]+\/messages$/];
/** Take-overs one request tries before it tells the client to retry (two retries racing each other for a key). */
const MAX_TAKEOVERS = 3;

/**
 * Whether a POST to this path (concrete, or a route's `{param}` template)
 * stores its answer under an `Idempotency-Key`: the routes whose OpenAPI
 * description declares the header. Routes without a bearer token (no org to
 * keep keys in) never do.
 */
export function honoursIdempotencyKey(path: string): boolean {
  return !KEY_REFUSED.test(path) && !NOT_STORED.some((p) => p.test(path));
}

/** The header as the OpenAPI document describes it. */
export const IdempotencyKeyHeader = z
  .string()
  .regex(KEY_PATTERN)
  .optional()
  .describe(
    "A key of your choice (1-255 printable ASCII characters, such as a UUID): a retry with the same key and body gets the first answer again " +
      `(with ${REPLAYED_HEADER}: true) and nothing runs twice; the same key with another body is refused (422 idempotency_conflict); ` +
      `a retry while the first request still runs gets 409 with retryable: true. Keys are kept for ${IDEMPOTENCY_TTL_MS / 3_600_000} hours.`,
  );

export interface IdempotencyOptions {
  now?: () => Date;
  /** Tells this daemon process's in-flight requests from those of a process that died. */
  owner?: string;
}

/**
 * `Idempotency-Key` on POST requests. The first request with a key claims it
 * (a row inserted before any work; for a route whose answer commits with its
 * work, the row that transaction inserts with the answer), runs, and its
 * answer is stored; a retry
 * with the same key, org, route and body gets that answer again with
 * `Idempotent-Replayed: true`, and nothing runs twice. The same key with
 * another body is refused (422 `idempotency_conflict`); a retry that arrives
 * while the first request still runs in this process gets 409 with
 * `retryable: true` (on a route whose answer commits with its work, the one
 * of the two that commits second gets it). A key another process holds with no answer is taken
 * over where the route's answer commits with its work (ANSWER_WITH_WORK),
 * and refused as of unknown outcome (409, not retryable) elsewhere.
 */
export function idempotency(keys: IdempotencyKeys, options: IdempotencyOptions = {}): MiddlewareHandler<ApiEnv> {
  const now = options.now ?? (() => new Date());
  const owner = options.owner ?? randomUUID();
  let lastPurge = 0;

  return async (c, next) => {
    const key = c.req.header(IDEMPOTENCY_HEADER);
    const org = c.get("org");
    if (c.req.method !== "POST" || key === undefined || org === undefined) return next();
    if (KEY_REFUSED.test(c.req.path)) {
      throw new WardrikError(
        "bad_request",
        `POST ${c.req.path} does not take an ${IDEMPOTENCY_HEADER}: a token's secret is shown once and never kept, so a retry could not be answered with the same token. Send the request without the header.`,
      );
    }
    if (NOT_STORED.some((p) => p.test(c.req.path))) return next();
    if (!KEY_PATTERN.test(key)) {
      throw new WardrikError(
        "bad_request",
        `${IDEMPOTENCY_HEADER} must be 1-255 printable ASCII characters without spaces, such as a UUID.`,
      );
    }
    const at = now();
    if (at.getTime() - lastPurge > PURGE_EVERY_MS) {
      lastPurge = at.getTime();
      await keys.purge(at);
    }
    const url = new URL(c.req.url);
    const scope = `${org} POST ${url.pathname}${url.search}`;
    const fingerprint = createHash("sha256")
      .update(await c.req.text())
      .digest("base64url");

    const withWork = ANSWER_WITH_WORK.some((p) => p.test(c.req.path));
    // A new key of a route whose answer commits with its work is not claimed first: the route's transaction records
    // it with the answer, and of two requests with the key only the first to commit does (the other rolls back).
    // One commit a request instead of two.
    const unclaimed = withWork && !(await keys.exists(scope, key));
    for (let tries = 1; !unclaimed; tries++) {
      const claim = await keys.claim(scope, key, fingerprint, owner, at);
      if (claim.claimed) break;
      const record = claim.record;
      if (record.fingerprint !== fingerprint) {
        throw new WardrikError(
          "idempotency_conflict",
          `This ${IDEMPOTENCY_HEADER} was already used for a request with another body; use a new key for a new request.`,
        );
      }
      if (record.state === "done") {
        return new Response(record.answer.body, {
          status: record.answer.status,
          headers: { "content-type": record.answer.contentType, [REPLAYED_HEADER]: "true" },
        });
      }
      if (record.owner === owner || (withWork && tries > MAX_TAKEOVERS)) {
        throw new WardrikError("conflict", `A request with this ${IDEMPOTENCY_HEADER} is still being served; retry in a moment.`, {
          retryable: true,
        });
      }
      if (withWork) {
        if (await keys.takeOver(scope, key, record, owner)) break;
        continue;
      }
      // Another daemon process took the first request and stored no answer: it may have stopped midway.
      throw new WardrikError(
        "conflict",
        `A request with this ${IDEMPOTENCY_HEADER} was taken by another daemon process that has stored no answer for it: if that daemon was interrupted (a restart), whether it took effect is unknown; check the agent's events before sending it again with a new key.`,
      );
    }

    let stored = false;
    let storedInTransaction = false;
    c.set("storeAnswerIn", async (tx, answer) => {
      const recorded = unclaimed
        ? await keys.insertAnswer(scope, key, fingerprint, owner, answer, at, tx)
        : await keys.complete(scope, key, fingerprint, owner, answer, tx);
      if (!recorded) {
        // Thrown inside the route's transaction: its work rolls back, and the attempt that holds the key does it.
        throw new WardrikError(
          "conflict",
          unclaimed
            ? `Another request with this ${IDEMPOTENCY_HEADER} was served while this one ran; retry to get its answer.`
            : `A retry with this ${IDEMPOTENCY_HEADER} took the request over while this attempt ran; retry to get its answer.`,
          { retryable: true },
        );
      }
      storedInTransaction = true;
    });
    try {
      await next();
      // The route stored its answer with its work: both committed, or the route failed and neither did.
      if (storedInTransaction && c.res.status < 500) {
        stored = true;
        return;
      }
      const res = c.res;
      const body = await res.clone().text();
      if (res.status < 500 && !isRetryableError(body)) {
        const answer = { status: res.status, body, contentType: res.headers.get("content-type") ?? "application/json" };
        if (unclaimed) await keys.insertAnswer(scope, key, fingerprint, owner, answer, at);
        else await keys.complete(scope, key, fingerprint, owner, answer);
        stored = true;
      }
    } finally {
      // A failure a retry may fix is not kept: the next request with the key runs anew (an unclaimed key has nothing kept).
      if (!stored && !unclaimed) await keys.release(scope, key, fingerprint, owner);
    }
  };
}

function isRetryableError(body: string): boolean {
  try {
    return (JSON.parse(body) as { retryable?: unknown }).retryable === true;
  } catch {
    return false;
  }
}
