/**
 * One call registers a route: its zod schemas validate the request and write
 * the route into the OpenAPI document, so the two cannot drift.
 *
 * ```ts
 * routes.add({
 *   method: "get",
 *   path: "/v1/agents/{id}/tools",          // `:id` works too
 *   operationId: "listAgentTools",
 *   tags: ["agents"],
 *   summary: "What the agent can call",
 *   query: ToolsQuery,                        // a z.strictObject; unknown parameters are 400
 *   response: ToolList,                       // documented, not checked at run time
 *   handler: async (c, { params, query }) => c.json(await list(params.id, query)),
 * });
 * ```
 *
 * Bodies (`body`) must be strict objects too; a route without `body` accepts no
 * body but `{}`. Error responses are documented from what the route declares:
 * 400 always (unknown query parameters), 401 and 429 unless `public`, 404 when the path
 * has parameters, 413 with a body, 431 always, and `errors` for the rest. A
 * POST with a token that keeps its answers under `Idempotency-Key` (see
 * honoursIdempotencyKey) documents the header, and the 409 and 422 it brings.
 */
import type { RouteConfig } from "@hono/zod-openapi";
import type { Context, Hono } from "hono";
import { z } from "zod";
import { EmptyBody } from "@wardrik/protocol";
import type { ApiEnv } from "./api-env.js";
import { honoursIdempotencyKey, IDEMPOTENCY_HEADER, IdempotencyKeyHeader } from "./idempotency.js";
import { defaultErrorResponse, errorResponseRef, REQUEST_ID_HEADER_REF, type DocumentedError } from "./openapi-document.js";
import { readRequestInput, type InputSchemas } from "./request-input.js";

export type { ApiEnv };

/** `{id}` and `:id` parameter names of a path template. */
export type ParamNames<P extends string> = P extends `${string}{${infer N}}${infer Rest}`
  ? N | ParamNames<Rest>
  : P extends `${string}:${infer N}/${infer Rest}`
    ? N | ParamNames<`/${Rest}`>
    : P extends `${string}:${infer N}`
      ? N
      : never;

export interface RouteInput<P extends string, Q, B> {
  params: { [K in ParamNames<P>]: string };
  query: Q extends z.ZodType ? z.output<Q> : Record<string, never>;
  body: B extends z.ZodType ? z.output<B> : Record<string, never>;
  /** Values of the documented request headers, by the names `headers` gives them. */
  headers: Record<string, string | undefined>;
}

export interface RouteSpec<P extends string, Q extends z.ZodObject | undefined, B extends z.ZodType | undefined> {
  method: "get" | "post" | "put" | "patch" | "delete";
  path: P;
  /** Unique, camelCase: generated clients name their functions after it. */
  operationId: string;
  tags: [string, ...string[]];
  summary: string;
  description?: string;
  /** Needs no bearer token. */
  public?: boolean;
  /** Schemas for path parameters; a parameter without one is any non-empty string. */
  params?: { [K in ParamNames<P>]?: z.ZodType<string> };
  query?: Q;
  /** Request headers the route reads (documented and validated; other headers pass). */
  headers?: z.ZodObject;
  /** A JSON body; must be a strict object schema. */
  body?: B;
  /** An empty body counts as `{}` (the schema still applies). */
  bodyOptional?: boolean;
  /**
   * A body the handler reads itself (`c.req.text()`, `c.req.arrayBuffer()`),
   * unparsed: for requests signed over their exact bytes, such as Slack's.
   * Documented with this content type; `body` must not be set as well.
   */
  rawBody?: { contentType: string; description: string };
  /** The success body (documented; not checked at run time). */
  response?: z.ZodType;
  status?: 200 | 201 | 202 | 204;
  /** A `text/event-stream` answer instead of JSON; the text describes its frames. */
  stream?: string;
  /** Error statuses beyond the ones derived from the spec (see the module comment). */
  errors?: DocumentedError[];
  handler: (c: Context<ApiEnv>, input: RouteInput<P, Q, B>) => Response | Promise<Response>;
}

interface KnownRoute {
  method: string;
  pattern: RegExp;
  public: boolean;
}

export class RouteTable {
  private readonly known: KnownRoute[] = [];
  /** Each route as the OpenAPI document describes it, made when the document is (see openapi-document.ts). */
  private readonly documented: (() => RouteConfig)[] = [];

  constructor(readonly app: Hono<ApiEnv>) {}

  add<P extends string, Q extends z.ZodObject | undefined = undefined, B extends z.ZodType | undefined = undefined>(
    spec: RouteSpec<P, Q, B>,
  ): void {
    const docPath = spec.path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}");
    const names = [...docPath.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
    const paramSchemas = (spec.params ?? {}) as Record<string, z.ZodType<string> | undefined>;
    const schemas: InputSchemas = {
      params: z.strictObject(Object.fromEntries(names.map((n) => [n, paramSchemas[n] ?? z.string().min(1)]))),
      query: spec.query ?? z.strictObject({}),
      ...(spec.headers ? { headers: spec.headers } : {}),
      body: spec.body ?? EmptyBody,
      bodyOptional: spec.body === undefined || spec.bodyOptional === true,
      ...(spec.rawBody ? { raw: true } : {}),
    };
    this.documented.push(() => this.describe(spec, docPath, schemas, names.length > 0));
    this.app.on(spec.method.toUpperCase(), docPath.replace(/\{([^}]+)\}/g, ":$1"), async (c) => {
      const input = await readRequestInput(c, schemas);
      return spec.handler(c, input as RouteInput<P, Q, B>);
    });
    const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const pattern = new RegExp(
      "^" +
        docPath
          .split(/\{[^}]+\}/)
          .map(literal)
          .join("[^/]+") +
        "$",
    );
    this.known.push({ method: spec.method.toUpperCase(), pattern, public: spec.public === true });
  }

  /** Every route's OpenAPI description, in the order the routes were added. */
  describedRoutes(): RouteConfig[] {
    return this.documented.map((describe) => describe());
  }

  /** The methods routes serve at this concrete path (GET implies HEAD); empty for an unknown path. */
  allowedMethods(path: string): string[] {
    const methods = new Set(this.known.filter((r) => r.pattern.test(path)).map((r) => r.method));
    if (methods.has("GET")) methods.add("HEAD");
    return [...methods];
  }

  /** Whether the path belongs to a route that needs no token. */
  isPublic(path: string): boolean {
    return this.known.some((r) => r.public && r.pattern.test(path));
  }

  private describe(
    spec: RouteSpec<string, z.ZodObject | undefined, z.ZodType | undefined>,
    path: string,
    schemas: InputSchemas,
    hasParams: boolean,
  ): RouteConfig {
    const status = spec.status ?? 200;
    const headers = { "X-Request-Id": { $ref: REQUEST_ID_HEADER_REF } };
    const success = spec.stream
      ? {
          description: "A stream of server-sent events",
          headers,
          content: { "text/event-stream": { schema: { type: "string" as const, description: spec.stream } } },
        }
      : spec.response && status !== 204
        ? { description: "OK", headers, content: { "application/json": { schema: spec.response } } }
        : { description: "OK", headers };
    const errors = new Set<DocumentedError>([400, 431, ...(spec.errors ?? [])]);
    if (!spec.public) {
      errors.add(401);
      errors.add(429);
    }
    if (hasParams) errors.add(404);
    if (spec.body || spec.rawBody) errors.add(413);
    const idempotent = spec.method === "post" && !spec.public && honoursIdempotencyKey(path);
    if (idempotent) {
      errors.add(409);
      errors.add(422);
    }
    const docHeaders = idempotent ? z.object({ ...spec.headers?.shape, [IDEMPOTENCY_HEADER]: IdempotencyKeyHeader }) : spec.headers;
    const responses: RouteConfig["responses"] = { [status]: success };
    for (const e of [...errors].sort()) responses[e] = { $ref: errorResponseRef(e) };
    responses.default = defaultErrorResponse();
    return {
      method: spec.method,
      path,
      operationId: spec.operationId,
      tags: spec.tags,
      summary: spec.summary,
      ...(spec.description ? { description: spec.description } : {}),
      ...(spec.public ? { security: [] } : {}),
      request: {
        ...(hasParams ? { params: schemas.params } : {}),
        ...(spec.query ? { query: spec.query } : {}),
        ...(docHeaders ? { headers: docHeaders } : {}),
        ...(spec.body ? { body: { required: !spec.bodyOptional, content: { "application/json": { schema: spec.body } } } } : {}),
        ...(spec.rawBody
          ? {
              body: {
                required: true,
                content: { [spec.rawBody.contentType]: { schema: z.string().describe(spec.rawBody.description) } },
              },
            }
          : {}),
      },
      responses,
    };
  }
}
