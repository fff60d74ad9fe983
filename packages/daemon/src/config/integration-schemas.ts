/**
 * The config.yaml keys that connect Wardrik to other systems: webhook
 * subscribers, the cluster, Slack and OpenTelemetry. Accepted and checked
 * here even where the feature behind a key is still being built, so a file
 * written for it today stays valid.
 */
import { z } from "zod";
import { eventTypePattern, httpUrl, listenAddress, nameText, seconds, stringMap, text } from "./schema-kit.js";

export const DEFAULT_LEASE_SECONDS = 10;
export const DEFAULT_SLACK_API_URL = "https://slack.com/api";
export const OTEL_SAMPLERS = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const;

export const DEFAULT_RETRY_FOR_SECONDS = 24 * 60 * 60;
export const DEFAULT_DELIVERY_TIMEOUT_SECONDS = 10;
export const DEFAULT_KEEP_DELIVERED_SECONDS = 7 * 24 * 60 * 60;

/** `whsec_` + base64, as Standard Webhooks writes signing secrets. */
export function isSigningSecret(value: string): boolean {
  return /^whsec_(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/.test(value);
}

export const subscriberSchema = z
  .strictObject({
    url: httpUrl().describe("Where each matching event is POSTed."),
    types: z.array(eventTypePattern()).optional().describe("Event types or patterns such as agent.*; default every type."),
    agents: z.array(nameText()).optional().describe("Only events of these agents (of config.yaml's org); default every agent."),
    // The message never shows the value: it is usually a secret.
    secret: z
      .string()
      .refine(isSigningSecret, { error: 'must be "whsec_" followed by a base64 key (Standard Webhooks)' })
      .optional()
      .describe('Signing key, "whsec_" + base64 (Standard Webhooks); usually ${secret:NAME}. Without it events are sent unsigned.'),
    retry_for: seconds()
      .default(DEFAULT_RETRY_FOR_SECONDS)
      .describe("Seconds a failing delivery is retried (with backoff) before it is dead-lettered; default 24 hours."),
    timeout: seconds().default(DEFAULT_DELIVERY_TIMEOUT_SECONDS).describe("Seconds one attempt may take; default 10."),
  })
  .describe("A webhook that receives events, signed as Standard Webhooks specifies.");

export const deliveriesSchema = z
  .strictObject({
    keep_delivered: seconds()
      .default(DEFAULT_KEEP_DELIVERED_SECONDS)
      .describe("Seconds a delivered delivery stays listed before it is deleted; default 7 days. Dead letters stay until sent again."),
  })
  .describe("The webhook outbox: how long sent deliveries are kept.");

export const clusterSchema = z
  .strictObject({
    lease: seconds()
      .default(DEFAULT_LEASE_SECONDS)
      .describe("Seconds a node owns an agent without renewing; other nodes take over after it."),
    idle_in_transaction: z
      .number()
      .nonnegative({ error: "must be a number of seconds >= 0" })
      .optional()
      .describe(
        "Seconds PostgreSQL lets a session of this node sit idle inside a transaction before it ends the session, so a frozen node's row locks go; default the lease, 0 leaves the server's setting.",
      ),
    advertise: httpUrl()
      .optional()
      .describe("Where the other nodes reach this one; default the listen address (the host name when it listens on every interface)."),
  })
  .describe("Daemons that share a PostgreSQL database.");

export const slackSchema = z
  .strictObject({
    bot_token: text().describe("The bot's token (xoxb-...); usually ${secret:NAME}."),
    signing_secret: text().describe("Verifies requests from Slack; usually ${secret:NAME}."),
    api_url: httpUrl().default(DEFAULT_SLACK_API_URL).describe("Slack's Web API."),
    channels: z
      .record(z.string().regex(/^[A-Z0-9]+$/, { error: "must be a Slack channel ID such as C0123ABCD" }), nameText())
      .default(() => ({}))
      .describe("Channel ID -> agent name: messages in the channel go to that agent."),
    approvers: z
      .array(text())
      .default(() => [])
      .describe("Slack user IDs who may approve or deny calls from Slack; empty: nobody."),
  })
  .describe("Talk to agents and approve their calls in Slack threads.");

export const telemetrySchema = z
  .strictObject({
    endpoint: httpUrl().optional().describe("OTLP endpoint (as OTEL_EXPORTER_OTLP_ENDPOINT); traces are off without one."),
    protocol: z.enum(["http/protobuf", "http/json"]).optional().describe("As OTEL_EXPORTER_OTLP_PROTOCOL."),
    headers: stringMap().optional().describe("Headers for the exporter, e.g. an API key."),
    service_name: text().optional().describe("As OTEL_SERVICE_NAME (default wardrik)."),
    sampler: z.enum(OTEL_SAMPLERS).optional().describe("As OTEL_TRACES_SAMPLER."),
    sampler_arg: z.number().min(0).max(1).optional().describe("As OTEL_TRACES_SAMPLER_ARG: the ratio for ratio samplers."),
    capture_message_content: z.boolean().optional().describe("Put prompts and replies in spans (default false)."),
    metrics_listen: listenAddress().optional().describe("A separate host:port for Prometheus metrics; default /metrics on the API."),
  })
  .describe("OpenTelemetry traces and Prometheus metrics; the standard OTEL_* variables work too.");

/** Spread into the top level of config.yaml's schema. */
export const integrationShape = {
  subscribers: z
    .array(subscriberSchema)
    .default(() => [])
    .describe("Webhooks that receive events."),
  deliveries: deliveriesSchema.optional(),
  cluster: clusterSchema.optional(),
  slack: slackSchema.optional(),
  telemetry: telemetrySchema.optional(),
};

export type SubscriberEntry = z.output<typeof subscriberSchema>;
export type DeliveriesSettings = z.output<typeof deliveriesSchema>;
export type ClusterSettings = z.output<typeof clusterSchema>;
export type SlackSettings = z.output<typeof slackSchema>;
export type TelemetrySettings = z.output<typeof telemetrySchema>;
