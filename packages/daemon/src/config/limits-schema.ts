/**
 * config.yaml `limits:`, what keeps one org (or one request) from slowing
 * the others. Each key stands alone with its default, so keys can be added
 * beside these without touching them.
 */
import { z } from "zod";
import { positiveInt, positiveNumber } from "./schema-kit.js";

/** Requests a second an org's tokens may send to one daemon; as many may come at once. */
export const DEFAULT_ORG_REQUESTS_PER_S = 50;
/** Turns of one org that run at once on one daemon; more wait for a place. */
export const DEFAULT_ORG_RUNNING_TURNS = 64;

export const limitsSchema = z
  .strictObject({
    org_requests_per_s: positiveNumber()
      .default(DEFAULT_ORG_REQUESTS_PER_S)
      .describe(
        `Requests a second one org's tokens may send to this daemon (as many may come at once after a quiet spell); past it the answer is 429 with Retry-After. The admin token is not counted. Default ${DEFAULT_ORG_REQUESTS_PER_S}.`,
      ),
    org_running_turns: positiveInt()
      .default(DEFAULT_ORG_RUNNING_TURNS)
      .describe(
        `Turns of one org that run at once on this daemon; a turn past it waits (its agent shows as queued) and starts when one of the org's turns ends or parks. Default ${DEFAULT_ORG_RUNNING_TURNS}.`,
      ),
  })
  .describe("Per-org limits, so that no org slows the others; each daemon of a cluster applies them to what it serves.");

export type LimitsSettings = z.output<typeof limitsSchema>;
