/**
 * An agent's `triggers:`: each queues a message from outside, on a schedule,
 * from a signed inbound webhook, or on other agents' events.
 */
import { z } from "zod";
import { eventTypePattern, namePattern, text } from "./schema-kit.js";

const KINDS = ["schedule", "webhook", "event"] as const;

/** 5 or 6 cron fields (croner's syntax), or a nickname such as @daily. */
const CRON = /^(\s*\S+(\s+\S+){4,5}\s*|@(yearly|annually|monthly|weekly|daily|hourly))$/;

function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

const common = {
  message: text().describe("The message to queue; {{field.path}} inserts a value from the trigger's data."),
  conversation: text().optional().describe("The conversation that gets the message; default one per trigger."),
};

const scheduleTrigger = z.strictObject({
  schedule: z
    .string()
    .regex(CRON, { error: 'must be a cron expression of 5 or 6 fields, such as "0 9 * * 1-5"' })
    .describe("When to fire: cron, 5 or 6 fields."),
  timezone: z
    .string()
    .refine(isTimeZone, { error: "must be an IANA time zone such as Europe/Berlin" })
    .optional()
    .describe("Time zone of the schedule; default the daemon's."),
  ...common,
});

const webhookTrigger = z.strictObject({
  webhook: namePattern().describe("The endpoint's name: POST /v1/hooks/{org}/{name}."),
  secret: text().describe("Verifies the request's signature; usually ${secret:NAME}."),
  ...common,
});

const eventTrigger = z.strictObject({
  event: z
    .strictObject({
      agent: namePattern().optional().describe("Whose events; default every agent of the org."),
      types: z.array(eventTypePattern()).optional().describe("Event types or patterns; default every type."),
    })
    .describe("Other agents' events."),
  ...common,
});

function kindError(issue: { input?: unknown }): string | undefined {
  const input = issue.input;
  if (typeof input !== "object" || input === null || Array.isArray(input)) return undefined;
  const kinds = KINDS.filter((kind) => kind in input);
  return kinds.length === 1 ? undefined : `needs exactly one of ${KINDS.join(", ")}`;
}

export const triggerSchema = z
  .union([scheduleTrigger, webhookTrigger, eventTrigger], { error: kindError })
  .describe("Queues a message: on a schedule, from a webhook, or on other agents' events.");

export type Trigger = z.output<typeof triggerSchema>;
