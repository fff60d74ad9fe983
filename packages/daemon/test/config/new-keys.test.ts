/**
 * Keys that later features read (tool_timeout, cluster, subscribers' agents,
 * slack, telemetry, agent triggers, limits): accepted with their defaults now, and
 * wrong values rejected with the file, the line and the key like any other.
 */
import { describe, expect, it } from "vitest";
import { ConfigError, parseAgentFile, parseConfig } from "../../src/config/index.js";
import { jsonSchemaFor } from "../../src/editor-schemas.js";

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (ConfigError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

const parse = (text: string) => parseConfig(text, "/srv/proj");
const agent = (frontmatter: string) => parseAgentFile(`---\ndescription: d\n${frontmatter}---\nbody\n`, "agents/a.md");

describe("config.yaml keys for later features", () => {
  it("fills defaults: tool_timeout 60 s, worker_grace 30 s, a cluster lease of 10 s, Slack's API", () => {
    expect(parse("").tool_timeout).toBe(60);
    expect(parse("").worker_grace).toBe(30);
    expect(parse("worker_grace: 0\n").worker_grace).toBe(0);
    expect(parse("cluster: {}\n").cluster).toEqual({ lease: 10 });
    // Unset, a node's PostgreSQL sessions idle in a transaction for at most the lease; 0 leaves the server's setting.
    expect(parse("cluster:\n  idle_in_transaction: 0\n").cluster).toEqual({ lease: 10, idle_in_transaction: 0 });
    expect(parse("slack:\n  bot_token: b\n  signing_secret: s\n").slack).toEqual({
      bot_token: "b",
      signing_secret: "s",
      api_url: "https://slack.com/api",
      channels: {},
      approvers: [],
    });
    expect(parse("").cluster).toBeUndefined();
    expect(parse("deliveries: {}\n").deliveries).toEqual({ keep_delivered: 7 * 24 * 3600 });
  });

  it.each([
    ["tool_timeout: 0", "config.yaml:2: tool_timeout must be a positive number of seconds", "tool_timeout"],
    ["tool_timeout: soon", "config.yaml:2: tool_timeout must be a number", "tool_timeout"],
    ["worker_grace: -1", "config.yaml:2: worker_grace must be a number of seconds >= 0", "worker_grace"],
    ["cluster:\n  lease: -1", "config.yaml:3: cluster.lease must be a positive number of seconds", "cluster.lease"],
    [
      "cluster:\n  idle_in_transaction: -1",
      "config.yaml:3: cluster.idle_in_transaction must be a number of seconds >= 0",
      "cluster.idle_in_transaction",
    ],
    [
      "cluster:\n  leese: 5",
      'config.yaml:3: key "cluster.leese" is not allowed: did you mean "lease"? (allowed: lease, idle_in_transaction, advertise)',
      "cluster.leese",
    ],
    [
      "subscribers:\n  - url: http://h\n    agents: [a b]",
      "config.yaml:4: subscribers[0].agents[0] must be 1-55 letters, digits, _ or -",
      "subscribers[0].agents[0]",
    ],
    ["slack:\n  bot_token: b", 'config.yaml:2: key "slack.signing_secret" is required', "slack.signing_secret"],
    [
      "slack:\n  bot_token: b\n  signing_secret: s\n  channels:\n    general: triage",
      'config.yaml:6: name "general" in slack.channels must be a Slack channel ID such as C0123ABCD',
      "slack.channels.general",
    ],
    [
      "deliveries:\n  keep_delivered: 0",
      "config.yaml:3: deliveries.keep_delivered must be a positive number of seconds",
      "deliveries.keep_delivered",
    ],
    ["telemetry:\n  protocol: grpc", "config.yaml:3: telemetry.protocol must be one of http/protobuf, http/json", "telemetry.protocol"],
    ["telemetry:\n  sampler_arg: 2", "config.yaml:3: telemetry.sampler_arg must be at most 1", "telemetry.sampler_arg"],
  ])("rejects %j with file, line and key", (text, message, key) => {
    const error = configError(() => parse(`org: a\n${text}\n`));
    expect(error.message).toBe(message);
    expect(error.key).toBe(key);
  });
});

describe("agent triggers", () => {
  it("accepts a schedule, a webhook and an event trigger", () => {
    const definition = agent(
      [
        "triggers:",
        "  - schedule: '*/5 * * * *'",
        "    message: tick",
        "  - webhook: deploy",
        "    secret: ${secret:DEPLOY_HOOK}",
        "    message: 'Deployed {{service}}'",
        "    conversation: deploys",
        "  - event: { agent: triage, types: ['agent.*'] }",
        "    message: look",
        "",
      ].join("\n"),
    );
    expect(definition.triggers).toEqual([
      { schedule: "*/5 * * * *", catch_up: true, message: "tick" },
      { webhook: "deploy", secret: "${secret:DEPLOY_HOOK}", message: "Deployed {{service}}", conversation: "deploys" },
      { event: { agent: "triage", types: ["agent.*"] }, message: "look" },
    ]);
  });

  it.each([
    ["triggers:\n  - message: hi", "agents/a.md:4: triggers[0] needs exactly one of schedule, webhook, event"],
    [
      "triggers:\n  - schedule: daily\n    message: hi",
      'agents/a.md:4: triggers[0].schedule must be a cron expression of 5 or 6 fields, such as "0 9 * * 1-5"',
    ],
    [
      "triggers:\n  - schedule: '0 9 * * *'\n    timezone: Mars/Olympus\n    message: hi",
      "agents/a.md:5: triggers[0].timezone must be an IANA time zone such as Europe/Berlin",
    ],
    ["triggers:\n  - webhook: deploy\n    message: hi", 'agents/a.md:4: key "triggers[0].secret" is required'],
    ["triggers:\n  - event: { agent: triage }", 'agents/a.md:4: key "triggers[0].message" is required'],
    [
      "triggers:\n  - event: { agnt: triage }\n    message: hi",
      'agents/a.md:4: key "triggers[0].event.agnt" is not allowed: did you mean "agent"? (allowed: agent, types)',
    ],
  ])("makes %j an error with file and line", (text, message) => {
    expect(configError(() => agent(`${text}\n`)).message).toBe(message);
  });
});

describe("limits in config.yaml", () => {
  it("defaults json_depth to 64, with or without a limits: section", () => {
    expect(parse("").limits.json_depth).toBe(64);
    expect(parse("limits: {}\n").limits.json_depth).toBe(64);
    expect(parse("limits:\n  json_depth: 16\n").limits).toMatchObject({ json_depth: 16, org_running_turns: 64 });
  });

  it.each([
    ["limits:\n  json_depth: 0", "config.yaml:3: limits.json_depth must be a positive integer"],
    ["limits:\n  json_depth: 2.5", "config.yaml:3: limits.json_depth must be a positive integer"],
    ["limits:\n  json_depth: 50000", "config.yaml:3: limits.json_depth must be at most 10000"],
    [
      "limits:\n  jsn_depth: 8",
      'config.yaml:3: key "limits.jsn_depth" is not allowed: did you mean "json_depth"? (allowed: org_requests_per_s, org_running_turns, json_depth)',
    ],
  ])("refuses %j, saying where", (text, message) => {
    expect(configError(() => parse(`org: a\n${text}\n`)).message).toBe(message);
  });

  it("is in the JSON Schema of config.yaml, with its default and what it bounds", () => {
    const schema = jsonSchemaFor("config") as { properties: Record<string, { properties?: Record<string, Record<string, unknown>> }> };
    const depth = schema.properties.limits?.properties?.json_depth;
    expect(depth).toMatchObject({ type: "integer", default: 64, maximum: 10_000 });
    expect(String(depth?.description)).toContain("json_too_deep");
  });
});
