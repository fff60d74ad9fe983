/**
 * What Slack sends, read leniently: Slack adds fields over time, so only the
 * fields Wardrik uses are checked, and unknown ones pass.
 */
import { z } from "zod";

/** An Events API request body: a URL check, or an event. */
export const EventInput = z.looseObject({
  type: z.string(),
  challenge: z.string().optional(),
  event_id: z.string().optional(),
  event: z
    .looseObject({
      type: z.string(),
      channel: z.string().optional(),
      user: z.string().optional(),
      text: z.string().optional(),
      ts: z.string().optional(),
      thread_ts: z.string().optional(),
      bot_id: z.string().optional(),
      subtype: z.string().optional(),
    })
    .optional(),
});
export type EventEnvelope = z.output<typeof EventInput>;

/** The `payload` of an interaction (a button clicked in a message). */
export const InteractionPayload = z.looseObject({
  type: z.string(),
  user: z.looseObject({ id: z.string() }),
  channel: z.looseObject({ id: z.string() }).optional(),
  container: z
    .looseObject({ channel_id: z.string().optional(), message_ts: z.string().optional(), thread_ts: z.string().optional() })
    .optional(),
  message: z.looseObject({ ts: z.string().optional(), thread_ts: z.string().optional() }).optional(),
  actions: z.array(z.looseObject({ action_id: z.string(), value: z.string().optional() })).default(() => []),
});
export type InteractionPayload = z.output<typeof InteractionPayload>;
