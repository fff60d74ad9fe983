import type { Context } from "hono";
import { parseJsonWithin } from "@wardrik/protocol";
import type { ApiEnv } from "./api-env.js";
import { MAX_BODY_BYTES } from "./limits.js";

/**
 * JSON a request brought, parsed within the daemon's limits (nesting from
 * config.yaml `limits.json_depth`, size MAX_BODY_BYTES): every route that
 * reads JSON from a request reads it through here, after any signature over
 * the raw bytes has been checked. Throws a WardrikError (`json_too_deep`,
 * `invalid_json`, `body_too_large`) that names `what`.
 */
export function parseRequestJson(c: Context<ApiEnv>, text: string, what = "The body"): unknown {
  return parseJsonWithin(text, { maxDepth: c.get("jsonDepth"), maxBytes: MAX_BODY_BYTES }, what);
}
