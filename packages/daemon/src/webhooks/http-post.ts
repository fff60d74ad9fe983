import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

/** What a subscriber answered: its status, Retry-After, and the start of its body (for the attempt log). */
export interface PostAnswer {
  status: number;
  retryAfter: string | undefined;
  body: string;
}

/** A subscriber's answer is read up to this much; the rest is drained unread. */
const MAX_BODY_BYTES = 4096;

// Kept-alive connections: one subscriber gets many deliveries, and a new connection per event costs more than the POST.
const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 16 });
const httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: 16 });

/**
 * POSTs one delivery with node:http rather than fetch: the sender runs in the
 * daemon's process beside the turns, and fetch costs several times the CPU
 * per request. Redirects are not followed (a subscriber's URL is exact).
 * Rejects on a network error or when `signal` aborts.
 */
export function postJson(url: string, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<PostAnswer> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const secure = u.protocol === "https:";
    const req = (secure ? httpsRequest : httpRequest)(
      u,
      {
        method: "POST",
        agent: secure ? httpsAgent : httpAgent,
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
        signal,
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          if (size < MAX_BODY_BYTES) chunks.push(c);
          size += c.length;
        });
        let ended = false;
        res.on("end", () => {
          ended = true;
          const retryAfter = res.headers["retry-after"];
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
            body: Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES).toString("utf8"),
          });
        });
        res.on("error", reject);
        // Aborted (the timeout) or cut off while the answer was still coming: no "end" will follow.
        res.on("close", () => {
          if (!ended) reject(signal.aborted ? signal.reason : new Error("the connection closed before the answer ended"));
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
