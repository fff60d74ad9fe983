/**
 * An agent file's frontmatter as a zod schema, and the same keys as a JSON
 * body for agents made through the HTTP API.
 */
import { z } from "zod";
import { triggerSchema } from "./trigger-schema.js";
import { NAME_RULE, namePattern, nonNegativeInt, positiveInt, positiveNumber, text } from "./schema-kit.js";
import { AGENT_DEFAULTS } from "./types.js";

/** `*`, `files`, `files/*`, `workers/find_order`, `workers/find_*`. */
const TOOL_PATTERN = /^(\*|[A-Za-z0-9_-]{1,55})(\/[A-Za-z0-9_*-]{1,55})?$/;

const toolPattern = z.string().regex(TOOL_PATTERN, {
  error: (issue) => `${JSON.stringify(issue.input)} is not a tool pattern (like files, linear/*, workers/find_order or *)`,
});

const frontmatterShape = {
  description: text().describe("What the agent is for."),
  title: text().optional().describe("Display name; default the file name."),
  model: z
    .union([text(), z.array(text()).min(1, { error: "must name at least one model" })], {
      error: "must be a model (provider/model-id or a name from config.yaml models) or a list of them",
    })
    .optional()
    .describe(
      '"provider/model-id" or a name from config.yaml models; default config.yaml model. A list is tried in order: the next model answers when one fails with an error that is not the request\'s fault (5xx, overload, timeouts, rate limits past their retries, a key the provider rejects); a bad request (400) does not fall back.',
    ),
  tools: z
    .array(toolPattern)
    .default(() => [])
    .describe("Tool patterns: files, linear/*, workers/find_order, workers/*."),
  policy: namePattern(`must be ${NAME_RULE} (a file in policies/)`)
    .optional()
    .describe("A policy from policies/; default config.yaml policy."),
  max_iterations: positiveInt().default(AGENT_DEFAULTS.max_iterations).describe("Model calls allowed in one turn."),
  timeout: positiveNumber().default(AGENT_DEFAULTS.timeout).describe("Seconds one turn may take."),
  retries: nonNegativeInt().default(AGENT_DEFAULTS.retries).describe("Retries of a failed model call (429, 5xx, network)."),
  idle_timeout: z
    .union([positiveNumber("must be a positive number of seconds or infinity"), z.literal("infinity")], {
      error: "must be a positive number of seconds or infinity",
    })
    .default(AGENT_DEFAULTS.idle_timeout)
    .describe("Seconds idle before the agent sleeps, or infinity."),
  budget: positiveNumber().optional().describe("US dollars the agent may spend per day."),
  context_window: positiveInt().optional().describe("Tokens; overrides the model's known window."),
  output: z
    .union([text(), z.record(z.string(), z.unknown())], {
      error: "must be a JSON Schema (an object) or the path of a JSON file holding one, relative to the project",
    })
    .optional()
    .describe(
      "A JSON Schema the final reply must fit, inline or as a path (schemas/report.json). Providers with structured output get the schema; every reply is checked, and one that does not fit is sent back for repair up to `retries` times before the turn fails with code bad_output. turn.completed carries the parsed reply as `output`.",
    ),
  agents: z
    .array(namePattern(`must be ${NAME_RULE} (an agent of the same org)`))
    .optional()
    .describe(
      "Agents this one may call, each offered as the tool agents/NAME with input { message, conversation? }. A call runs a turn of that agent (its child turn) in a conversation of its own and answers with the reply. The parent's policy decides the call; the child's spend counts against the parent's budget too.",
    ),
  max_depth: positiveInt()
    .optional()
    .describe(
      `How deep calls to other agents may nest below this one (default ${AGENT_DEFAULTS.max_depth}): a call that would go deeper, or reach an agent already in the chain (a cycle), is refused.`,
    ),
  triggers: z.array(triggerSchema).optional().describe("Messages queued from outside: schedules, webhooks, events."),
};

export const agentFrontmatterSchema = z
  .strictObject(frontmatterShape)
  .describe("An agent file's frontmatter (agents/NAME.md); the Markdown body is the agent's instructions.");

/** An agent as a JSON body: the frontmatter keys plus what a file gets from its name and body. */
export const agentBodySchema = z.strictObject({
  name: namePattern(),
  ...frontmatterShape,
  instructions: z.string().optional(),
});

export type AgentFrontmatter = z.output<typeof agentFrontmatterSchema>;
