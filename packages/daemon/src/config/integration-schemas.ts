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

export const subscriberSchema = z
  .strictObject({
    url: httpUrl().describe("Where each matching event is POSTed."),
    types: z.array(eventTypePattern()).optional().describe("Event types or patterns such as agent.*; default every type."),
    agents: z.array(nameText()).optional().describe("Only events of these agents; default every agent."),
    secret: z.string().optional().describe('Signing key, "whsec_" + base64 (Standard Webhooks); usually ${secret:NAME}.'),
  })
  .describe("A webhook that receives events, signed as Standard Webhooks specifies.");

export const clusterSchema = z
  .strictObject({
    lease: seconds()
      .default(DEFAULT_LEASE_SECONDS)
      .describe("Seconds a node owns an agent without renewing; other nodes take over after it."),
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
  cluster: clusterSchema.optional(),
  slack: slackSchema.optional(),
  telemetry: telemetrySchema.optional(),
};

export type SubscriberEntry = z.output<typeof subscriberSchema>;
export type ClusterSettings = z.output<typeof clusterSchema>;
export type SlackSettings = z.output<typeof slackSchema>;
export type TelemetrySettings = z.output<typeof telemetrySchema>;
