import { z } from "zod";
import { ERROR_CODES } from "./errors.js";
import { ToolPatternProblem } from "./agent-tools.js";
import { describeUnsafeCharacter, findUnsafeCharacter } from "./safe-text.js";

/**
 * Bodies and queries of the HTTP API, shared by the daemon (validation and the
 * OpenAPI document) and the SDK client. Every request schema is strict: a key
 * the route does not know is an error, never silently dropped (a misspelt
 * `conversation` must not widen a cancel to every conversation).
 *
 * `.meta({ id })` names the shapes that become `components.schemas` in the
 * OpenAPI document; zod keeps that in its own registry, so nothing here
 * depends on the document generator.
 */

/** A text that is shown back to people: no control characters, no bidirectional overrides. */
function readableText(what: string, max: number) {
  return z
    .string()
    .min(1, `${what} must not be empty; leave it out instead`)
    .max(max, `${what} is longer than ${max} characters`)
    .superRefine((value, ctx) => {
      const found = findUnsafeCharacter(value);
      if (found) ctx.addIssue({ code: "custom", message: `${what} ${describeUnsafeCharacter(found)}` });
    });
}

/**
 * A whole number in a query string (use it for every numeric query parameter). Only digits are read as a number, so an
 * empty or signed value is an error rather than 0 (z.coerce would take "" and
 * null as 0, which also made the OpenAPI document call these nullable).
 */
export function queryInteger(min: number, max: number): z.ZodType<number, unknown> {
  // Typed as a plain ZodType: the inferred z.ZodPreprocess exists only from zod 4.4, and the
  // published types must hold for every zod 4 the peer range admits (test/packaging/older-zod.test.ts).
  return z.preprocess(
    (v) => (typeof v === "string" && /^\d+$/.test(v) ? Number(v) : v),
    z.number({ error: "must be a whole number" }).int().min(min).max(max),
  );
}

export const ConversationKey = readableText("the conversation key", 200)
  .describe("A conversation's key (its name), such as main")
  .meta({ id: "ConversationKey" });
/** A path in an agent's file space, with the same character rules as conversation keys. */
export const FilePath = readableText("the file path", 512).describe("A path in the agent's file space, such as notes/today.md");

export const ErrorResponse = z
  .object({
    type: z.string().describe('The problem type: "about:blank", so the status says what kind of problem it is and code names it precisely'),
    title: z.string().describe("The status's reason phrase, such as Not Found"),
    status: z.number().int().describe("The HTTP status of the answer"),
    detail: z.string().describe("What is wrong and how to fix it"),
    instance: z.string().optional().describe("The path of the request that failed"),
    code: z.enum(ERROR_CODES).describe("Stable machine-readable code, such as bad_request or not_found (an extension member)"),
    retryable: z.boolean().describe("Whether the same request may succeed later (an extension member)"),
  })
  .meta({
    id: "Problem",
    description: "Every error of the API is a problem document (RFC 9457), sent as application/problem+json.",
  });
export type ErrorResponse = z.infer<typeof ErrorResponse>;

export const AgentStatus = z
  .enum(["idle", "running", "parked", "queued", "asleep", "unreadable"])
  .describe("queued: a message waits for a place among its org's running turns (config.yaml limits.org_running_turns)")
  .meta({ id: "AgentStatus" });
export type AgentStatus = z.infer<typeof AgentStatus>;

export const AgentSummary = z
  .object({
    id: z.string(),
    org: z.string(),
    name: z.string(),
    title: z.string(),
    description: z.string(),
    status: AgentStatus,
    source: z.enum(["file", "api"]),
    reason: z.string().optional().describe("Why the agent is unreadable"),
    question: z
      .object({ call: z.string(), question: z.string(), choices: z.array(z.string()).optional() })
      .optional()
      .describe(
        "A question of the agent that waits for a person's answer (the oldest, when several do): answer it with POST .../calls/{call}/answer",
      ),
  })
  .meta({ id: "AgentSummary" });
export type AgentSummary = z.infer<typeof AgentSummary>;

/** One of an agent's `triggers:` (schedule, inbound webhook, other agents' events), with when it fires next or fired last. */
export const TriggerView = z
  .object({
    kind: z.enum(["schedule", "webhook", "event"]),
    key: z.string().describe("The trigger's identity within its agent, such as webhook:deploy"),
    conversation: z.string().describe("The conversation that gets the trigger's messages"),
    message: z.string().describe("The message template"),
    schedule: z.string().optional().describe("Cron expression (schedule triggers)"),
    timezone: z.string().optional(),
    catch_up: z.boolean().optional().describe("Whether a firing missed while no daemon ran happens at start"),
    webhook: z.string().optional().describe("The endpoint's name (webhook triggers)"),
    path: z.string().optional().describe("Where the webhook is POSTed: /v1/hooks/{org}/{name}"),
    event: z.object({ agent: z.string().optional(), types: z.array(z.string()).optional() }).optional(),
    next_run: z.string().optional().describe("When a schedule fires next (ISO 8601)"),
    last_fired: z.string().optional().describe("When the trigger last queued a message (ISO 8601)"),
    last_message: z.string().optional().describe("The message ID its last firing queued"),
  })
  .meta({ id: "AgentTrigger" });
export type TriggerView = z.infer<typeof TriggerView>;

/** A policy as the daemon applies it, rule by rule (read only). */
export const PolicyView = z
  .object({
    name: z.string(),
    description: z.string().optional(),
    rules: z.array(
      z.object({
        tool: z.string().describe("The tool pattern the rule matches"),
        decision: z.enum(["allow", "ask", "deny", "judge"]),
        when: z.record(z.string(), z.unknown()).optional().describe("Conditions on the call's arguments, by argument path"),
        reason: z.string().optional(),
        judge: z.object({ model: z.string(), prompt: z.string(), on_error: z.enum(["ask", "deny"]) }).optional(),
        source: z.string().optional().describe("Where the rule is written, e.g. policies/careful.yaml:12"),
      }),
    ),
    budget: z.object({ per_turn_usd: z.number().optional(), per_day_usd: z.number().optional() }).optional(),
  })
  .meta({ id: "PolicyView" });
export type PolicyView = z.infer<typeof PolicyView>;

export const AgentDetail = AgentSummary.extend({
  node: z.string().optional().describe("The node that drives the agent while it is awake"),
  model: z.string().optional().describe("The model the agent calls first; absent when it uses config.yaml's default"),
  fallback_models: z.array(z.string()).optional().describe("Models tried in order when the one before fails (model: [a, b, ...])"),
  output: z.record(z.string(), z.unknown()).optional().describe("The JSON Schema the final reply must fit (output:), a path already read"),
  tools: z.array(z.string()),
  agents: z.array(z.string()).optional().describe("Agents this one may call, each as the tool agents/NAME (agents:)"),
  max_depth: z.number().int().describe("How deep calls to other agents may nest below this one"),
  policy: z.string().optional(),
  effective_policy: PolicyView.optional().describe(
    "The policy that decides the agent's calls (its own, else config.yaml's), rule by rule; absent when the built-in default decides (read-only calls run, others ask a person)",
  ),
  max_iterations: z.number().int(),
  timeout: z.number(),
  retries: z.number().int(),
  idle_timeout: z.union([z.number(), z.literal("infinity")]),
  budget: z.number().optional(),
  context_window: z.number().int().optional(),
  instructions: z.string(),
  file: z.string().optional(),
  last_activity_at: z.string().optional().describe("When the agent's latest event happened"),
  conversations: z.array(z.object({ id: z.string(), key: z.string(), status: z.string() })),
  waiting_calls: z.array(
    z.object({
      call: z.string(),
      tool: z.string(),
      run: z.string(),
      args: z.unknown().describe("The arguments the call would run with, as the model gave them"),
      reason: z.string().optional().describe("Why it waits: the policy rule's reason, or that its answer was lost"),
      rule: z.string().optional().describe("The policy rule that asked for approval, when one did"),
      question: z
        .object({ question: z.string(), choices: z.array(z.string()).optional() })
        .optional()
        .describe("Set when the call is a question to a person (person/ask): it waits for an answer, not an approval"),
    }),
  ),
  edited_calls: z
    .array(
      z.object({
        call: z.string(),
        tool: z.string(),
        run: z.string(),
        status: z.string(),
        args: z.unknown().describe("The arguments a person gave at approval, which the call ran with"),
        original_args: z.unknown().describe("What the model asked for"),
      }),
    )
    .optional()
    .describe("The agent's latest calls (at most 5) a person approved with edited arguments, the latest first"),
  spend: z.object({
    today_usd: z.number(),
    model_usd: z.number(),
    tools_usd: z.number(),
    per_day_cap_usd: z.number().optional(),
    per_turn_cap_usd: z.number().optional(),
  }),
  tool_sources: z.array(z.object({ name: z.string(), status: z.string(), reason: z.string().optional() })),
  tool_warnings: z.array(ToolPatternProblem).describe("Tool patterns of the agent that can match nothing"),
  triggers: z
    .array(TriggerView)
    .describe("The agent's triggers: schedules with their next run, webhooks and event triggers with their last firing"),
}).meta({ id: "AgentDetail" });
export type AgentDetail = z.infer<typeof AgentDetail>;

export const ListAgentsQuery = z.strictObject({
  name: z.string().optional().describe("Only the agent with this name"),
  limit: queryInteger(1, 1000).default(100).describe("Agents per page (1-1000)"),
  cursor: z.string().min(1).optional().describe("The `next` value of the previous page"),
});
export type ListAgentsQuery = z.input<typeof ListAgentsQuery>;

export const AgentPage = z
  .object({
    agents: z.array(AgentSummary).describe("Ordered by name"),
    next: z.string().nullable().describe("Pass as `cursor` for the next page; null on the last page"),
  })
  .meta({ id: "AgentPage" });
export type AgentPage = z.infer<typeof AgentPage>;

export const CreateAgentBody = z
  .strictObject({
    name: z.string().describe("1-55 letters, digits, _ or -"),
    description: z.string(),
    instructions: z.string().default(""),
    title: z.string().optional(),
    model: z.string().optional(),
    tools: z.array(z.string()).optional(),
    policy: z.string().optional(),
    max_iterations: z.number().int().positive().optional(),
    timeout: z.number().positive().optional(),
    retries: z.number().int().nonnegative().optional(),
    idle_timeout: z.union([z.number().positive(), z.literal("infinity")]).optional(),
    budget: z.number().positive().optional(),
    context_window: z.number().int().positive().optional(),
    agents: z.array(z.string()).optional().describe("Agents this one may call, each offered as the tool agents/NAME"),
    max_depth: z.number().int().positive().optional().describe("How deep calls to other agents may nest below this one (default 3)"),
  })
  .meta({ id: "CreateAgentBody" });
export type CreateAgentBody = z.input<typeof CreateAgentBody>;

export const PostMessageBody = z
  .strictObject({
    text: z
      .string()
      .min(1)
      .max(1_000_000)
      .refine((t) => !t.includes("\u0000"), {
        error: (issue) => `must not contain NUL characters (U+0000, first at character ${String(issue.input).indexOf("\u0000") + 1})`,
      }),
    conversation: ConversationKey.optional().describe("Conversation key; default main"),
  })
  .meta({ id: "PostMessageBody" });
export type PostMessageBody = z.input<typeof PostMessageBody>;

export const PostMessageResult = z
  .object({
    message: z.string(),
    conversation: z.string(),
    conversation_id: z.string(),
    seq: z.number().int().describe("Sequence of the message.queued event; follow events after seq - 1"),
  })
  .meta({ id: "PostMessageResult" });
export type PostMessageResult = z.infer<typeof PostMessageResult>;

export const ConversationList = z
  .object({ conversations: z.array(z.object({ id: z.string(), key: z.string(), created_at: z.string() })) })
  .meta({ id: "ConversationList" });

export const HistoryQuery = z.strictObject({
  after: queryInteger(0, Number.MAX_SAFE_INTEGER).default(0).describe("Only messages after this sequence number"),
  limit: queryInteger(1, 10_000).default(1000),
});

export const HistoryMessage = z
  .object({
    seq: z.number().int(),
    role: z.enum(["user", "assistant", "tool"]),
    run: z.string().optional(),
    content: z
      .unknown()
      .describe(
        "The message as stored: {text} for a user; {text, toolCalls: [{callId, tool, args}]} for an assistant; {results} for tool results. A tool call whose arguments a person edited at approval has `args` as it ran, `original_args` as the model asked, and `edited: true`",
      ),
    created_at: z.string(),
  })
  .meta({ id: "HistoryMessage" });
export type HistoryMessage = z.infer<typeof HistoryMessage>;

export const HistoryPage = z.object({ messages: z.array(HistoryMessage), summary: z.string().nullable() }).meta({ id: "HistoryPage" });

/** Narrows cancel and clear to one conversation; without it they reach every conversation. */
export const ScopeBody = z.strictObject({ conversation: ConversationKey.optional() }).meta({ id: "ScopeBody" });
export const CancelResult = z
  .object({ cancelled: z.array(z.string()).describe("Turns stopped"), dropped: z.number().int().describe("Queued messages dropped") })
  .meta({ id: "CancelResult" });
export const ClearResult = z.object({ cleared: z.array(z.string()).describe("Conversation keys emptied") }).meta({ id: "ClearResult" });

export const DenyBody = z.strictObject({ reason: z.string().max(10_000).optional() }).meta({ id: "DenyBody" });
export const ApproveBody = z
  .strictObject({
    arguments: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        "Run the call with these arguments instead of the model's; they are checked against the tool's input schema, " +
          "and the record (approval.granted) keeps both",
      ),
  })
  .meta({ id: "ApproveBody" });
export type ApproveBody = z.input<typeof ApproveBody>;
export const AnswerBody = z
  .strictObject({
    answer: z
      .string()
      .min(1)
      .max(10_000)
      .describe("The answer to the question; when the question has choices, exactly one of them. It is the call's result (`{ answer }`)"),
  })
  .meta({ id: "AnswerBody" });
export type AnswerBody = z.input<typeof AnswerBody>;
export const CallActionResult = z.object({ call: z.string(), status: z.string(), tool: z.string() }).meta({ id: "CallActionResult" });
/** For POST routes that take no input: `{}` or no body at all. */
export const EmptyBody = z.strictObject({});

/** A CloudEvents 1.0 JSON envelope as the API returns it (see WardrikCloudEvent). */
export const CloudEvent = z
  .object({
    specversion: z.literal("1.0"),
    id: z.string(),
    source: z.string(),
    type: z.string().describe("dev.wardrik.<noun>.<verb_past>, such as dev.wardrik.turn.completed"),
    time: z.string(),
    subject: z.string().optional(),
    datacontenttype: z.literal("application/json"),
    seq: z.number().int().describe("Position in the agent's ordered log"),
    run: z.string().optional().describe("The turn's ID, for events of a turn"),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: "CloudEvent" });

export const EventsQuery = z.strictObject({
  after: queryInteger(0, Number.MAX_SAFE_INTEGER).default(0).describe("Only events after this sequence number"),
  limit: queryInteger(1, 10_000).default(1000),
  type: z.string().optional().describe("Comma-separated event types, short (turn.completed) or full"),
  run: z.string().min(1).max(100).optional().describe("Only the events of this turn (its run ID, run_...)"),
  q: z
    .string()
    .min(1, "must not be empty; leave it out to list every event")
    .max(200, "is longer than 200 characters")
    .optional()
    .describe(
      "Only events whose data contains this text, ignoring the case of ASCII letters (of every letter on PostgreSQL): " +
        "a message's or reply's words, a tool's argument, an error",
    ),
});
export const EventPage = z
  .object({ events: z.array(CloudEvent), last_seq: z.number().int().describe("The agent's latest sequence number") })
  .meta({ id: "EventPage" });
export const EventStreamQuery = EventsQuery.pick({ after: true, type: true, run: true }).extend({
  conversation: ConversationKey.optional().describe("Only one conversation's events (its key): its messages and its turns"),
});
export const EventStreamHeaders = z.object({
  "Last-Event-ID": z.string().optional().describe("Resume after this sequence number (sent by EventSource clients on reconnect)"),
});

export const CreateTokenBody = z
  .strictObject({
    org: z.string().regex(/^[A-Za-z0-9_-]{1,55}$/, "org names are 1-55 letters, digits, _ or -"),
    name: readableText("the token name", 100).optional(),
  })
  .meta({ id: "CreateTokenBody" });
export const CreatedToken = z
  .object({ org: z.string(), name: z.string(), token: z.string().describe("Shown once") })
  .meta({ id: "CreatedToken" });

export const SetSecretBody = z.strictObject({ value: z.string().min(1).max(65_536) }).meta({ id: "SetSecretBody" });
export const StoredSecret = z.object({ name: z.string(), stored: z.literal(true) }).meta({ id: "StoredSecret" });
export const SecretNames = z
  .object({
    secrets: z.array(z.string()).describe("Every stored secret's name, in order"),
    unreadable: z
      .array(z.object({ name: z.string(), error: z.string().describe("Why it cannot be decrypted (never its value)") }))
      .describe("Stored secrets that cannot be decrypted: what needs them cannot run; the rest of the daemon does"),
  })
  .meta({ id: "SecretNames" });
export type SecretNames = z.infer<typeof SecretNames>;

export const ReloadResult = z
  .object({
    added: z.array(z.string()),
    updated: z.array(z.string()),
    removed: z.array(z.string()),
    unreadable: z.array(z.string()),
    warnings: z
      .array(ToolPatternProblem.extend({ agent: z.string() }))
      .describe("Tool patterns of the loaded agents that match nothing (also in the daemon's log)"),
    model_warnings: z
      .array(z.object({ agent: z.string(), model: z.string(), reason: z.string() }))
      .optional()
      .describe("Loaded agents whose model will fail every call, such as one without an API key (also in the daemon's log)"),
    unreadable_reasons: z
      .array(z.object({ agent: z.string(), reason: z.string() }))
      .optional()
      .describe("Why each agent of `unreadable` cannot be used: every problem of its file, one a line"),
  })
  .meta({ id: "ReloadResult" });
export type ReloadResult = z.infer<typeof ReloadResult>;
export const Health = z.object({ ok: z.boolean(), version: z.string() }).meta({ id: "Health" });
export const Ok = z.object({ ok: z.literal(true) }).meta({ id: "Ok" });
