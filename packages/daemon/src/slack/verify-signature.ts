/**
 * Slack's request signing (v0): `X-Slack-Signature` is `v0=` and the hex
 * HMAC-SHA256, under the app's signing secret, of `v0:TIMESTAMP:BODY`, where
 * TIMESTAMP is `X-Slack-Request-Timestamp` (Unix seconds) and BODY the raw
 * request body. A request more than five minutes from now is refused, so a
 * recorded request cannot be replayed later.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export const MAX_REQUEST_AGE_S = 5 * 60;

export interface SignedRequest {
  timestamp: string | undefined;
  signature: string | undefined;
  body: Uint8Array;
}

/** Why a request is not from Slack, or undefined when its signature holds. The reason never contains the secret. */
export function signatureProblem(secret: string, req: SignedRequest, nowMs: number): string | undefined {
  if (req.timestamp === undefined || req.signature === undefined)
    return "The request is not signed: it needs X-Slack-Request-Timestamp and X-Slack-Signature headers.";
  if (!/^\d{1,12}$/.test(req.timestamp)) return "X-Slack-Request-Timestamp must be Unix seconds.";
  const age = Math.abs(nowMs / 1000 - Number(req.timestamp));
  if (age > MAX_REQUEST_AGE_S) return "X-Slack-Request-Timestamp is more than 5 minutes away from now; the request is refused.";
  const expected = Buffer.from(sign(secret, req.timestamp, req.body));
  const given = Buffer.from(req.signature);
  // Same length first: timingSafeEqual throws on buffers of different sizes.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return "X-Slack-Signature does not match the request.";
  return undefined;
}

/** `v0=HEX` for a body sent at `timestamp` (also what tests use to sign requests). */
export function sign(secret: string, timestamp: string, body: Uint8Array | string): string {
  const hmac = createHmac("sha256", secret);
  hmac.update(`v0:${timestamp}:`);
  hmac.update(body);
  return `v0=${hmac.digest("hex")}`;
}
