import { z } from "zod";
import { CloudEvent, queryInteger } from "./http.js";

/** The org-wide feed: every agent's events of the token's org in one stream. */
export const FeedQuery = z.strictObject({
  after: z
    .string()
    .regex(/^[0-9.]{1,60}$/, "must be a cursor from an earlier page or event")
    .optional()
    .describe("Only events after this cursor (an event's `cursor`, or a page's `cursor`); omit for the start of the record"),
  limit: queryInteger(1, 10_000).default(1000),
  type: z.string().optional().describe("Comma-separated type patterns: turn.completed, dev.wardrik.turn.completed, call.*"),
  agent: z.string().optional().describe("Comma-separated agent IDs; only their events"),
});
export type FeedQuery = z.input<typeof FeedQuery>;

export const FeedEvent = CloudEvent.and(z.object({ cursor: z.string().describe("Pass as `after` to read on from this event") }));

export const FeedPage = z
  .object({
    events: z.array(FeedEvent),
    cursor: z.string().describe("Pass as `after` for the next page; unchanged when nothing new was committed"),
  })
  .meta({ id: "FeedPage" });
export type FeedPage = z.infer<typeof FeedPage>;

export const FeedStreamQuery = FeedQuery.omit({ limit: true }).extend({
  live: z.enum(["only"]).optional().describe("`only`: skip the record so far and follow what comes next"),
});
export const FeedStreamHeaders = z.object({
  "Last-Event-ID": z.string().optional().describe("Resume after this cursor (sent by EventSource clients on reconnect)"),
});
