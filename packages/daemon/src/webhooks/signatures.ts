import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Webhook signatures both ways. Standard Webhooks: the key is the base64
 * part after `whsec_` (any other secret is used as its UTF-8 bytes), the
 * signed content is `webhook-id.webhook-timestamp.body`, and
 * `webhook-signature` holds space-separated `v1,<base64 HMAC-SHA256>`
 * values. GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`
 * keyed with the secret's UTF-8 bytes.
 */

const PREFIX = "whsec_";

/** How far a Standard Webhooks timestamp may be from now (the specification's 5 minutes), against replays. */
export const TIMESTAMP_TOLERANCE_S = 5 * 60;

export function signingKey(secret: string): Buffer {
  return secret.startsWith(PREFIX) ? Buffer.from(secret.slice(PREFIX.length), "base64") : Buffer.from(secret, "utf8");
}

/** The `webhook-signature` value for one message. */
export function signStandard(key: Buffer, id: string, timestampS: number, body: string): string {
  return `v1,${createHmac("sha256", key).update(`${id}.${timestampS}.${body}`).digest("base64")}`;
}

export interface StandardHeaders {
  id: string | undefined;
  timestamp: string | undefined;
  signature: string | undefined;
}

/** Undefined when the request is signed with `key`, else what is wrong (never the expected value). */
export function checkStandard(key: Buffer, h: StandardHeaders, body: string, nowS: number): string | undefined {
  if (!h.id || !h.timestamp || !h.signature) return "webhook-id, webhook-timestamp and webhook-signature are required";
  if (!/^\d{1,12}$/.test(h.timestamp)) return "webhook-timestamp must be whole seconds since 1970";
  if (Math.abs(nowS - Number(h.timestamp)) > TIMESTAMP_TOLERANCE_S) return "webhook-timestamp is more than 5 minutes from now";
  const expected = Buffer.from(signStandard(key, h.id, Number(h.timestamp), body).slice(3), "base64");
  for (const part of h.signature.split(" ")) {
    const [version, value] = part.split(",", 2);
    if (version !== "v1" || !value) continue;
    const given = Buffer.from(value, "base64");
    if (given.length === expected.length && timingSafeEqual(given, expected)) return undefined;
  }
  return "webhook-signature does not match";
}

/** Undefined when `header` (X-Hub-Signature-256) signs `body` with `secret`, else what is wrong. */
export function checkGithub(secret: string, header: string | undefined, body: string): string | undefined {
  if (!header) return "X-Hub-Signature-256 is required";
  const m = /^sha256=([0-9a-f]{64})$/i.exec(header.trim());
  if (!m) return "X-Hub-Signature-256 must be sha256=<64 hex digits>";
  const expected = createHmac("sha256", Buffer.from(secret, "utf8")).update(body).digest();
  const given = Buffer.from(m[1]!, "hex");
  return timingSafeEqual(given, expected) ? undefined : "X-Hub-Signature-256 does not match";
}
