/**
 * An agent's `triggers:`: each queues a message from outside, on a schedule,
 * from a signed inbound webhook, or on other agents' events.
 */
import { Cron } from "croner";
import { z } from "zod";
import { eventTypePattern, namePattern, text } from "./schema-kit.js";

const KINDS = ["schedule", "webhook", "event"] as const;

/** 5 or 6 cron fields (croner's syntax), or a nickname such as @daily. */
const CRON = /^(\s*\S+(\s+\S+){4,5}\s*|@(yearly|annually|monthly|weekly|daily|hourly))$/;

/** croner's own reading of the expression: a field out of range is an error here, not a schedule that never fires. */
function cronProblem(value: string): string | undefined {
  try {
    new Cron(value, { paused: true, mode: "5-or-6-parts" });
    return undefined;
  } catch (err) {
    return (err as Error).message.replace(/^CronPattern: /, "");
  }
}

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
    .superRefine((value, ctx) => {
      const problem = cronProblem(value);
      if (problem) ctx.addIssue({ code: "custom", message: `is not a valid cron expression: ${problem}` });
    })
    .describe("When to fire: cron, 5 or 6 fields (6: the first is seconds)."),
  timezone: z
    .string()
    .refine(isTimeZone, { error: "must be an IANA time zone such as Europe/Berlin" })
    .optional()
    .describe("Time zone of the schedule; default the daemon's."),
  catch_up: z.boolean().default(true).describe("Fire once at start when the schedule came due while no daemon ran; default true."),
  ...common,
});

const webhookTrigger = z.strictObject({
  webhook: namePattern().describe("The endpoint's name: POST /v1/hooks/{org}/{name}."),
  secret: text().describe(
    'Verifies the request: Standard Webhooks headers (a "whsec_" + base64 secret) or GitHub\'s X-Hub-Signature-256; usually ${secret:NAME}.',
  ),
  ...common,
});

const eventTrigger = z.strictObject({
  event: z
    .strictObject({
      agent: namePattern().optional().describe("Whose events; default every other agent of the org (never the agent's own)."),
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
