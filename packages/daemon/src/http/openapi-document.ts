import type { OpenAPIHono, RouteConfig } from "@hono/zod-openapi";
import { ErrorResponse, PROBLEM_CONTENT_TYPE } from "@wardrik/protocol";
import { MAX_BODY_BYTES, MAX_HEADER_BYTES } from "./limits.js";

/** Error statuses a route can document (the components below). */
export type DocumentedError = 400 | 401 | 403 | 404 | 409 | 413 | 422 | 429 | 431;

const ERROR_RESPONSES: Record<DocumentedError | "default", { name: string; description: string; headers?: Record<string, unknown> }> = {
  400: { name: "BadRequest", description: "The request is malformed: invalid JSON, an unknown key or query parameter, a wrong value" },
  401: {
    name: "Unauthorized",
    description: "No bearer token, or one that is not valid",
    headers: {
      "WWW-Authenticate": {
        description: 'Bearer realm="wardrik"; with error="invalid_token" when a token was sent but is not valid',
        schema: { type: "string" },
      },
    },
  },
  403: { name: "Forbidden", description: "The token may not do this (only the admin token may)" },
  404: { name: "NotFound", description: "No such agent, conversation, turn or call in the token's org" },
  409: { name: "Conflict", description: "The request conflicts with the current state (a name in use, a call not waiting)" },
  413: { name: "BodyTooLarge", description: `The body is larger than ${MAX_BODY_BYTES} bytes` },
  422: { name: "Unprocessable", description: "The request is well-formed but cannot be applied as sent" },
  429: {
    name: "TooManyRequests",
    description: "The token's org sent more requests a second than config.yaml's limits.org_requests_per_s allows",
    headers: { "Retry-After": { description: "Seconds to wait before sending again", schema: { type: "integer" } } },
  },
  431: { name: "HeadersTooLarge", description: `The request headers are larger than ${MAX_HEADER_BYTES} bytes` },
  default: { name: "ServerError", description: "The daemon could not answer (retryable says whether trying again may help)" },
};

export const REQUEST_ID_HEADER_REF = "#/components/headers/X-Request-Id";
const PROBLEM_CONTENT = { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: "#/components/schemas/Problem" } } };

export function errorResponseRef(status: DocumentedError): string {
  return `#/components/responses/${ERROR_RESPONSES[status].name}`;
}

/**
 * A route's catch-all answer, written out (not a $ref) because it is what puts
 * the zod ErrorResponse (id "Problem") into components.schemas, which the shared
 * error responses refer to.
 */
export function defaultErrorResponse() {
  return {
    description: ERROR_RESPONSES.default.description,
    headers: { "X-Request-Id": { $ref: REQUEST_ID_HEADER_REF } },
    content: { [PROBLEM_CONTENT_TYPE]: { schema: ErrorResponse } },
  };
}

const TAGS = [
  { name: "meta", description: "The daemon itself: health and this document" },
  { name: "agents", description: "Agents of the token's org, their status and definition" },
  { name: "conversations", description: "Messages, history, cancel and clear" },
  { name: "turns", description: "Turns and the tool calls in them, approvals" },
  { name: "events", description: "The agent's ordered record as CloudEvents, read back or followed live" },
  { name: "admin", description: "Tokens, secrets and reloading agents/" },
  { name: "slack", description: "Slack's Events API and interactivity requests, signed by Slack instead of a bearer token" },
  { name: "mcp", description: "The MCP servers agents use, and their OAuth logins (agents themselves are offered over MCP at /v1/mcp)" },
  { name: "cluster", description: "The daemons sharing the database, and the calls one node runs for another" },
  { name: "webhooks", description: "Events out (deliveries to config.yaml's subscribers) and in (signed webhooks that fire triggers)" },
  { name: "console", description: "The web console's sign-in (one-time links) and who a token is" },
];

/** Components shared by every route: the Problem body, its responses, the request ID header, bearer auth. */
function registerSharedComponents(registry: OpenAPIHono["openAPIRegistry"]): void {
  registry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
    description: "A token of one org; the local admin token is in .wardrik/admin-token",
  });
  registry.registerComponent("headers", "X-Request-Id", {
    description:
      "The request's ID: the client's X-Request-Id when it sent a usable one, else a new one. Log lines of the request carry it.",
    schema: { type: "string" },
  });
  for (const [status, r] of Object.entries(ERROR_RESPONSES)) {
    if (status === "default") continue;
    registry.registerComponent("responses", r.name, {
      description: r.description,
      headers: { "X-Request-Id": { $ref: REQUEST_ID_HEADER_REF }, ...r.headers },
      content: PROBLEM_CONTENT,
    });
  }
}

/**
 * The OpenAPI document of `routes`. The generator (`@hono/zod-openapi` and
 * the zod-to-openapi it extends zod with) loads here, with the first request
 * for the document, rather than at every daemon start.
 */
export async function buildDocument(routes: RouteConfig[], version: string): Promise<unknown> {
  const { OpenAPIHono } = await import("@hono/zod-openapi");
  const generator = new OpenAPIHono();
  registerSharedComponents(generator.openAPIRegistry);
  for (const route of routes) generator.openAPIRegistry.registerPath(route);
  return generator.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "Wardrik API",
      version,
      license: { name: "Apache-2.0", url: "https://www.apache.org/licenses/LICENSE-2.0" },
      description:
        "Governed, durable LLM agents. Every route but health, this document and Slack's (which Slack signs) needs a bearer token of one org. " +
        "Every answer carries X-Request-Id; errors are problem documents (RFC 9457, application/problem+json; components.schemas.Problem) whose code and retryable members say which error it is and whether to retry. " +
        "A known path with a method it does not take answers 405 with Allow.",
    },
    servers: [{ url: "/" }],
    security: [{ bearer: [] }],
    tags: TAGS,
  });
}
