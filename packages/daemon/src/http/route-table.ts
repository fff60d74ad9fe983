import type { Context, Hono } from "hono";
import { z } from "zod";
import { WardrikError } from "@wardrik/protocol";

export type ApiEnv = { Variables: { org: string; admin: boolean } };

export interface RouteSpec {
  method: "get" | "post" | "delete";
  /** Hono path syntax (`:id`); the OpenAPI document shows `{id}`. */
  path: string;
  summary: string;
  query?: z.ZodObject;
  body?: z.ZodType;
  response?: z.ZodType;
  status?: number;
  public?: boolean;
  handler: (c: Context<ApiEnv>) => Promise<Response> | Response;
}

/**
 * Routes registered once, both on the Hono app and in the OpenAPI document,
 * so the document cannot drift from what the server serves.
 */
export class RouteTable {
  readonly specs: RouteSpec[] = [];

  constructor(private readonly app: Hono<ApiEnv>) {}

  add(spec: RouteSpec): void {
    this.specs.push(spec);
    this.app.on(spec.method.toUpperCase(), spec.path, (c) => spec.handler(c));
  }

  openapi(version: string): Record<string, unknown> {
    const paths: Record<string, Record<string, unknown>> = {};
    for (const s of this.specs) {
      const path = s.path.replace(/:([A-Za-z_]+)/g, "{$1}");
      const params = [...s.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
        name: m[1],
        in: "path",
        required: true,
        schema: { type: "string" },
      }));
      if (s.query) {
        for (const [name, schema] of Object.entries(s.query.shape)) {
          params.push({ name, in: "query", required: false, schema: jsonSchema(schema as z.ZodType) as { type: string } });
        }
      }
      const op: Record<string, unknown> = {
        summary: s.summary,
        ...(params.length > 0 ? { parameters: params } : {}),
        ...(s.public ? { security: [] } : {}),
        responses: {
          [String(s.status ?? 200)]: {
            description: "OK",
            ...(s.response ? { content: { "application/json": { schema: jsonSchema(s.response) } } } : {}),
          },
          default: { description: "Error", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
        },
      };
      if (s.body) op.requestBody = { required: true, content: { "application/json": { schema: jsonSchema(s.body) } } };
      (paths[path] ??= {})[s.method] = op;
    }
    return {
      openapi: "3.1.0",
      info: { title: "Wardrik API", version, description: "Governed, durable LLM agents. Every route needs a bearer token of one org." },
      servers: [{ url: "/" }],
      security: [{ bearer: [] }],
      components: {
        securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
        schemas: {
          Error: {
            type: "object",
            required: ["error"],
            properties: {
              error: {
                type: "object",
                required: ["code", "message", "retryable"],
                properties: { code: { type: "string" }, message: { type: "string" }, retryable: { type: "boolean" } },
              },
            },
          },
        },
      },
      paths,
    };
  }
}

function jsonSchema(schema: z.ZodType): unknown {
  try {
    return z.toJSONSchema(schema, { io: "input", unrepresentable: "any" });
  } catch {
    return {};
  }
}

/** Parses a JSON body with errors that say what is wrong; `fallback` for an empty body. */
export async function readJson(c: Context, fallback?: unknown): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === "") {
    if (fallback !== undefined) return fallback;
    throw new WardrikError("bad_request", "The request needs a JSON body.");
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new WardrikError("invalid_json", `The body is not valid JSON: ${(err as Error).message}`);
  }
}
