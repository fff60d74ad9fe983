/**
 * config.yaml as a zod schema: what the daemon accepts, and (through
 * z.toJSONSchema) what editors complete and check. Values are validated after
 * `${env:...}` and `${secret:...}` are resolved, so rules on a value that may
 * be a reference are refinements, which the JSON Schema leaves out.
 */
import { z } from "zod";
import { integrationShape } from "./integration-schemas.js";
import { limitsSchema } from "./limits-schema.js";
import { NAME_PATTERN, isValidName } from "@wardrik/protocol";
import {
  NAME_RULE,
  addIssue,
  httpUrl,
  listenAddress,
  nameText,
  nonNegativeNumber,
  positiveInt,
  seconds,
  stringList,
  stringMap,
  text,
} from "./schema-kit.js";
import { DEFAULT_HOST, DEFAULT_PORT } from "./types.js";

export const PROVIDERS = ["openai", "openai-chat", "anthropic", "openai-compatible", "script"] as const;
/** Tool namespaces Wardrik itself provides. */
export const RESERVED_NAMESPACES = ["files", "workers", "person", "agents"];
export const DEFAULT_DATABASE = "sqlite:.wardrik/wardrik.db";
export const DEFAULT_TOOL_TIMEOUT = 60;
export const DEFAULT_WORKER_GRACE = 30;

export function isDatabaseUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//.test(value) || (value.startsWith("sqlite:") && value.length > "sqlite:".length);
}

const database = z
  .string()
  .refine(isDatabaseUrl, { error: "must be sqlite:PATH or a postgres:// URL" })
  .describe("sqlite:PATH (relative to the project) or a postgres://USER@HOST:PORT/DB URL.");

const price = z
  .strictObject({
    input: nonNegativeNumber().describe("USD per million input tokens."),
    output: nonNegativeNumber().describe("USD per million output tokens."),
    cached_input: nonNegativeNumber().optional().describe("USD per million cached input tokens."),
  })
  .describe("Prices in USD per million tokens.");

export const modelEntrySchema = z
  .strictObject({
    provider: z.enum(PROVIDERS).describe("Which API speaks for this model."),
    model: text().describe("The provider's model ID (for script, the script's name)."),
    base_url: httpUrl().optional().describe("The server's URL; required for openai-compatible."),
    api_key: z.string().optional().describe("Usually ${env:NAME} or ${secret:NAME}."),
    headers: stringMap().optional().describe("Extra HTTP headers for every request."),
    context_window: positiveInt().optional().describe("Tokens the model reads at once."),
    price: price.optional(),
  })
  .superRefine((entry, ctx) => {
    if (entry.provider === "openai-compatible" && entry.base_url === undefined) {
      addIssue(ctx, ["base_url"], "is required for provider openai-compatible", true);
    }
  })
  // The rule above, for editors.
  .meta({ if: { properties: { provider: { const: "openai-compatible" } } }, then: { required: ["base_url"] } });

// `provider/model-id` and entry names share an agent's `model` key; a slash would be ambiguous.
const modelName = z.string().regex(/^[^/]+$/, { error: 'must not contain "/"' });

/** The orgs besides config.yaml's own whose agents may use a server. */
const mcpOrgs = z
  .array(z.string().refine((v) => v === "*" || isValidName(v), { error: `must be an org name (${NAME_RULE}) or "*"` }))
  .optional()
  .describe(
    "Other orgs whose agents may list and call this server; it carries config.yaml's credentials, so by default only config.yaml's org may. \"*\": every org.",
  );

const mcpStdio = z.strictObject({
  command: text().describe("The program that starts the server (stdio)."),
  args: stringList().optional(),
  env: stringMap().optional().describe("Environment variables for the server."),
  orgs: mcpOrgs,
});

const mcpOAuth = z
  .strictObject({
    client_id: text()
      .optional()
      .describe("A client registered by hand with the server's authorization server; without it Wardrik registers itself."),
    client_secret: z.string().optional().describe("That client's secret, if it has one; usually ${secret:NAME}."),
    scope: text().optional().describe("Scopes to ask for, space-separated; default: what the server asks for."),
    redirect_url: httpUrl()
      .optional()
      .describe("This daemon's /v1/oauth/callback as the browser reaches it; default http://LISTEN/v1/oauth/callback."),
  })
  .describe("The OAuth login (wardrik mcp login NAME) of a server that asks for one.");

const mcpHttp = z
  .strictObject({
    url: httpUrl().describe("The server's streamable HTTP endpoint."),
    headers: stringMap().optional(),
    oauth: mcpOAuth.optional(),
    orgs: mcpOrgs,
  })
  .superRefine((entry, ctx) => {
    if (entry.oauth?.client_secret !== undefined && entry.oauth.client_id === undefined) {
      addIssue(ctx, ["oauth", "client_id"], "is required with client_secret", true);
    }
    if (entry.oauth && Object.keys(entry.headers ?? {}).some((h) => h.toLowerCase() === "authorization")) {
      addIssue(ctx, ["oauth"], "cannot be used with an Authorization header: the header already logs Wardrik in");
    }
  });

function mcpFormError(issue: { input?: unknown }): string | undefined {
  const input = issue.input;
  if (typeof input !== "object" || input === null || Array.isArray(input)) return undefined;
  const stdio = "command" in input;
  return stdio === "url" in input ? "needs either command (stdio) or url (streamable HTTP), not both" : undefined;
}

// The name becomes the tool namespace, and the model sees `namespace__tool`.
const mcpName = z
  .string()
  .regex(NAME_PATTERN, { error: `must be ${NAME_RULE}, without "__"` })
  .regex(/^(?!.*__)/, { error: `must be ${NAME_RULE}, without "__"` })
  .regex(new RegExp(`^(?!(${RESERVED_NAMESPACES.join("|")})$)`), {
    error: (issue) => `is taken by the built-in ${String(issue.input)} tools; pick another name`,
  });

const mcpServers = z.record(mcpName, z.union([mcpStdio, mcpHttp], { error: mcpFormError }));

/** One org's own part of config.yaml: what belongs to that org alone and carries its secrets. */
const orgSection = z.strictObject({
  mcp: mcpServers
    .default(() => ({}))
    .describe(
      "MCP servers of this org alone: their ${secret:NAME} references read this org's secrets, and only this org's agents may list and call them. Names share the tool namespaces with every other server.",
    ),
});

export const configSchema = z
  .strictObject({
    org: nameText().default("default").describe("The org that agents/ belongs to."),
    listen: listenAddress()
      .default({ host: DEFAULT_HOST, port: DEFAULT_PORT })
      .describe(`Address of the HTTP API: "host:port", ":port" or a port (default ${DEFAULT_HOST}:${DEFAULT_PORT}).`),
    database: database.default(DEFAULT_DATABASE),
    model: text().optional().describe('The default model: "provider/model-id" or a name from models.'),
    models: z
      .record(modelName, modelEntrySchema)
      .default(() => ({}))
      .describe("Named models that agents can refer to."),
    mcp: mcpServers.default(() => ({})).describe("MCP servers by name; the name is the tool namespace."),
    orgs: z
      .record(nameText(`must be an org name (${NAME_RULE})`), orgSection)
      .optional()
      .describe("What belongs to one org other than config.yaml's own, by org: its MCP servers."),
    policy: nameText(`must be ${NAME_RULE} (a file in policies/)`).optional().describe("The policy for agents that name none."),
    tool_timeout: seconds().default(DEFAULT_TOOL_TIMEOUT).describe("Seconds before a tool call times out."),
    limits: limitsSchema.prefault({}),
    worker_grace: z
      .number()
      .nonnegative({ error: "must be a number of seconds >= 0" })
      .default(DEFAULT_WORKER_GRACE)
      .describe(
        "Seconds that calls wait for a worker after a start or a takeover before they fail with no worker, and that a call whose worker left waits for its answer; a call whose answer was lost goes to a person only when no worker knows it by then.",
      ),
    ...integrationShape,
  })
  .superRefine((config, ctx) => {
    const model = config.model;
    // A bare name must be a `models:` entry; `provider/model-id` is resolved by models/.
    if (model !== undefined && !model.includes("/") && !Object.hasOwn(config.models, model)) {
      addIssue(ctx, ["model"], 'must be "provider/model-id" or the name of an entry in models');
    }
    // A server's name is its tool namespace, one for the whole daemon: an org's server cannot reuse another's.
    const taken = new Map(Object.keys(config.mcp).map((n) => [n, `mcp.${n}`]));
    for (const [org, section] of Object.entries(config.orgs ?? {})) {
      for (const [name, entry] of Object.entries(section.mcp)) {
        const path = ["orgs", org, "mcp", name];
        if (entry.orgs !== undefined) addIssue(ctx, [...path, "orgs"], `cannot be used here: the server belongs to org ${org} alone`);
        const other = taken.get(name);
        if (other) addIssue(ctx, path, `the name "${name}" is taken by ${other}: tool namespaces are shared by every org, pick another`);
        else taken.set(name, path.join("."));
      }
    }
  })
  .describe("Wardrik daemon settings (config.yaml). Changes take effect when the daemon restarts.");

export type ConfigFile = z.output<typeof configSchema>;
