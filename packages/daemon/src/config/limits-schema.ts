/**
 * config.yaml `limits:`, what keeps one org (or one request) from slowing
 * the others. Each key stands alone with its default, so keys can be added
 * beside these without touching them.
 */
import { z } from "zod";
import { DEFAULT_JSON_DEPTH } from "@wardrik/protocol";
import { positiveInt, positiveNumber } from "./schema-kit.js";

/** Requests a second an org's tokens may send to one daemon; as many may come at once. */
export const DEFAULT_ORG_REQUESTS_PER_S = 50;
/** Turns of one org that run at once on one daemon; more wait for a place. */
export const DEFAULT_ORG_RUNNING_TURNS = 64;
/** Deeper than this, the daemon's own recursive code (validation, redaction, storage) would run out of stack. */
export const MAX_JSON_DEPTH = 10_000;

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
    json_depth: positiveInt()
      .max(MAX_JSON_DEPTH, { error: `must be at most ${MAX_JSON_DEPTH}` })
      .default(DEFAULT_JSON_DEPTH)
      .describe(
        `How deep objects and arrays may nest in JSON from outside (request bodies, worker frames, MCP messages, Slack and webhook payloads, a model's tool arguments, tool results); deeper is refused with 400 json_too_deep (a worker's connection is closed). Default ${DEFAULT_JSON_DEPTH}.`,
      ),
  })
  .describe(
    "Per-org limits, so that no org slows the others (each daemon of a cluster applies them to what it serves), and bounds on what one request may make the daemon do.",
  );

export type LimitsSettings = z.output<typeof limitsSchema>;
