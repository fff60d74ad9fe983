import { createHash, createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import type { KeyRing, SecretKey } from "../secrets/key-ring.js";

/**
 * How the nodes of a cluster prove themselves to each other. Nothing stored
 * in the database is trusted for it: whoever can read the database could
 * read that too. The node key is derived (HKDF-SHA256 with a fixed label)
 * from the key that encrypts secrets (WARDRIK_SECRET_KEY, or the key file),
 * which every node of a cluster already shares and the database never holds.
 *
 * Each request a node sends another is signed, not given a password: an
 * HMAC of the time, the method, the path and the body's hash, sent as
 * `wardrik-cluster: t=MS,k=KEYID,v1=SIGNATURE`. The receiver recomputes it
 * with any key of its ring (so a key rotation that reaches the nodes one by
 * one breaks nothing), refuses a time more than five minutes off, and a
 * signature it has already taken (a replay).
 */
export const CLUSTER_HEADER = "wardrik-cluster";

const LABEL = "wardrik cluster node key v1";
const SALT = "wardrik";
/** How far a request's time may be from the receiver's clock. */
export const MAX_SKEW_MS = 5 * 60_000;

/** The node key of one secrets key. */
export function nodeKey(key: SecretKey): Buffer {
  return Buffer.from(hkdfSync("sha256", key.key, SALT, LABEL, 32));
}

function signature(key: Buffer, time: number, method: string, path: string, body: string): string {
  const digest = createHash("sha256").update(body, "utf8").digest("hex");
  return createHmac("sha256", key).update(`${time}\n${method.toUpperCase()}\n${path}\n${digest}`).digest("base64url");
}

/** The header value that signs a request, with the ring's current key. */
export function signRequest(ring: KeyRing, method: string, path: string, body: string, now = Date.now()): string {
  const sig = signature(nodeKey(ring.current), now, method, path, body);
  return `t=${now},k=${ring.current.id},v1=${sig}`;
}

/**
 * Checks a request's header against its method, path and exact body bytes;
 * returns what is wrong, or undefined when another node of this cluster sent it.
 */
export function verifyRequest(
  ring: KeyRing,
  header: string | undefined,
  method: string,
  path: string,
  body: string,
  now = Date.now(),
): string | undefined {
  const parts = new Map((header ?? "").split(",").map((p) => [p.slice(0, p.indexOf("=")), p.slice(p.indexOf("=") + 1)] as const));
  const time = Number(parts.get("t"));
  const given = parts.get("v1");
  if (!header || !Number.isSafeInteger(time) || !given) return `the request carries no ${CLUSTER_HEADER} signature`;
  if (Math.abs(now - time) > MAX_SKEW_MS)
    return "the request's signature is too old (or its node's clock is off by more than five minutes)";
  const key = ring.readable.find((k) => k.id === parts.get("k"));
  if (!key) return "the request is signed with a key this node does not have (every node needs the same WARDRIK_SECRET_KEY or key file)";
  const expected = Buffer.from(signature(nodeKey(key), time, method, path, body));
  const got = Buffer.from(given);
  if (got.length !== expected.length || !timingSafeEqual(got, expected)) return "the request's signature does not match";
  return undefined;
}

/** Signatures taken within the allowed skew: the same one again is a replay. */
export class SeenSignatures {
  private readonly seen = new Map<string, number>();

  /** True the first time `header` is offered (until it would be too old anyway). */
  first(header: string, now = Date.now()): boolean {
    if (this.seen.size > 10_000) for (const [h, until] of this.seen) if (until < now) this.seen.delete(h);
    if (this.seen.has(header)) return false;
    this.seen.set(header, now + 2 * MAX_SKEW_MS);
    return true;
  }
}
