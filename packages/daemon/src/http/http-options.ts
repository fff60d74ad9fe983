import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { FairShare } from "../runtime/fair-share.js";
import type { Authenticate } from "./bearer-auth.js";

import type { Logger } from "../log/logger.js";

/** The daemon's log function as the HTTP layer uses it; fields carry `request_id`. */
export type HttpLog = Logger;

export interface HttpOptions {
  authenticate: Authenticate;
  /** WebSocket upgrades (the worker gateway) by path. */
  upgrades?: Record<string, (req: IncomingMessage, socket: Duplex, head: Buffer) => void>;
  log?: HttpLog;
  /** How deep JSON in requests may nest (config.yaml `limits.json_depth`); default DEFAULT_JSON_DEPTH. */
  jsonDepth?: number;
  /** Renders Prometheus metrics for GET /metrics (admin token); without it the route does not exist. */
  metrics?: () => Promise<string>;
  /** Requests a second each org's tokens may send (config `limits.org_requests_per_s`); without it, no limit. */
  orgRequestsPerS?: number;
  /** The event loop shared between orgs (the runtime's): a request waits its org's turn once its token names the org. */
  fairShare?: FairShare;
}
