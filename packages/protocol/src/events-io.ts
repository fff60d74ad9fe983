import { z } from "zod";
import { queryInteger } from "./http.js";

/**
 * Events out and in: webhook deliveries (the outbox of signed POSTs to the
 * subscribers of config.yaml) and the answer to an inbound webhook, as the
 * HTTP API shows them. An agent's triggers are part of AgentDetail (http.ts).
 */

export const DeliveryStatus = z
  .enum(["pending", "delivered", "failed"])
  .describe("pending: not yet accepted by the subscriber; delivered: answered 2xx; failed: dead-lettered after its retry window")
  .meta({ id: "DeliveryStatus" });
export type DeliveryStatus = z.infer<typeof DeliveryStatus>;

export const DeliveryAttempt = z
  .object({
    attempt: z.number().int(),
    started_at: z.string(),
    duration_ms: z.number().int(),
    status: z.number().int().optional().describe("The subscriber's HTTP status; absent when it gave no answer"),
    error: z.string().optional(),
  })
  .meta({ id: "DeliveryAttempt" });
export type DeliveryAttempt = z.infer<typeof DeliveryAttempt>;

export const DeliveryView = z
  .object({
    id: z.string(),
    subscriber: z.string().describe("The subscriber's URL"),
    agent: z.string().describe("The agent whose event this is"),
    event: z.string().describe("The event's ID (also the webhook-id header)"),
    event_type: z.string(),
    seq: z.number().int().describe("The event's position in its agent's log"),
    status: DeliveryStatus,
    attempts: z.number().int(),
    next_attempt_at: z.string().optional().describe("When a pending delivery is tried next"),
    created_at: z.string(),
    ended_at: z.string().optional(),
    last_error: z.string().optional(),
    possible_repeats: z
      .number()
      .int()
      .optional()
      .describe(
        "Times it was sent again after the daemon sending it died before storing the answer: the subscriber may have it more than once, with the same webhook-id",
      ),
    attempt_log: z.array(DeliveryAttempt),
  })
  .meta({ id: "Delivery" });
export type DeliveryView = z.infer<typeof DeliveryView>;

export const DeliveryQuery = z.strictObject({
  status: DeliveryStatus.optional().describe("Only deliveries in this state (failed: the dead letters)"),
  limit: queryInteger(1, 1000).default(100).describe("Deliveries per page, newest first (1-1000)"),
  cursor: z.string().min(1).optional().describe("The `next` value of the previous page"),
});
export type DeliveryQuery = z.input<typeof DeliveryQuery>;

export const DeliveryPage = z
  .object({
    deliveries: z.array(DeliveryView).describe("Newest first"),
    next: z.string().nullable().describe("Pass as `cursor` for the next page; null on the last page"),
  })
  .meta({ id: "DeliveryPage" });
export type DeliveryPage = z.infer<typeof DeliveryPage>;

export const HookAccepted = z
  .object({
    message: z.string().describe("The ID of the queued message (the first, when several agents take this webhook)"),
    messages: z.array(z.object({ agent: z.string(), agent_name: z.string(), message: z.string(), conversation: z.string() })),
    replayed: z
      .boolean()
      .describe("True when this delivery was accepted before (same webhook-id or Idempotency-Key): nothing new was queued"),
  })
  .meta({ id: "HookAccepted" });
export type HookAccepted = z.infer<typeof HookAccepted>;
