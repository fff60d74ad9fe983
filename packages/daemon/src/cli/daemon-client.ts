import { WardrikClient } from "@wardrik/sdk/client";
import { nodeHttpTransport } from "./http-request.js";

export { isNoAnswer, type RequestOptions, type RetryListener } from "@wardrik/sdk/client";

/**
 * The CLI talks to the daemon with the SDK's client (`@wardrik/sdk/client`):
 * the same routes, retries, errors and event-stream reader as any program,
 * over node:http (http-request.ts). Every POST carries an Idempotency-Key, so
 * a command retried across a daemon restart runs once.
 */
export type DaemonClient = WardrikClient;

/** A client of the daemon at `url` with `token`, acting in `org` (admin token only) or the token's own. */
export function daemonClient(url: string, token: string, org?: string): DaemonClient {
  return new WardrikClient({ url, token, org, transport: nodeHttpTransport });
}
