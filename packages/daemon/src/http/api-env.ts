import type { Tx } from "../store/db.js";
import type { StoredAnswer } from "../store/idempotency-keys.js";

/** What the middleware puts on a request's context for the routes. */
export type ApiEnv = {
  Variables: {
    org: string;
    admin: boolean;
    /** Who acts: `token:NAME`, recorded as `by` on the approvals they decide. */
    actor: string;
    requestId: string;
    /** How deep JSON from outside may nest on this daemon (config.yaml `limits.json_depth`); see untrusted-json.ts. */
    jsonDepth: number;
    /**
     * Set by the Idempotency-Key middleware: a route that stores its work in one
     * transaction stores its answer in that same transaction through this, so a
     * crash between the two cannot leave the work done and the key unanswered.
     */
    storeAnswerIn?: (tx: Tx, answer: StoredAnswer) => Promise<void>;
  };
};
