import type { Context } from "hono";
import type { ApiEnv } from "./api-env.js";
import type { z } from "zod";
import { WardrikError } from "@wardrik/protocol";
import { describeIssues, type InputPart } from "./http-errors.js";
import { parseRequestJson } from "./untrusted-json.js";
import { nextLoopTurn } from "../runtime/time-slices.js";

export interface InputSchemas {
  params: z.ZodObject;
  query: z.ZodObject;
  headers?: z.ZodObject;
  body: z.ZodType;
  /** An empty body counts as `{}`. */
  bodyOptional: boolean;
  /** The handler reads the body itself: it is left unread here. */
  raw?: boolean;
}

export interface RequestInput {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
  headers: Record<string, string | undefined>;
}

/** Reads and validates every part of a request with the route's schemas; the first bad part is a 400. */
export async function readRequestInput(c: Context<ApiEnv>, schemas: InputSchemas): Promise<RequestInput> {
  const params = check("path", schemas.params, c.req.param());
  const query = check("query", schemas.query, queryObject(c.req.url));
  const headers: Record<string, string | undefined> = {};
  if (schemas.headers) {
    const raw = Object.fromEntries(Object.keys(schemas.headers.shape).map((name) => [name, c.req.header(name)]));
    Object.assign(headers, check("header", schemas.headers, raw));
  }
  const body = schemas.raw ? {} : check("body", schemas.body, await readBody(c, schemas.bodyOptional));
  return { params, query, body, headers };
}

function check<T>(part: InputPart, schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const known = "shape" in schema ? Object.keys((schema as unknown as z.ZodObject).shape) : [];
  throw new WardrikError("bad_request", `Invalid request: ${describeIssues(part, result.error.issues, known)}`);
}

/** Query parameters as an object; a parameter given twice is an error rather than a guess. */
function queryObject(url: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of new URL(url).searchParams) {
    if (Object.hasOwn(out, key))
      throw new WardrikError("bad_request", `Invalid request: query parameter ${key} is given twice; give it once.`);
    out[key] = value;
  }
  return out;
}

async function readBody(c: Context<ApiEnv>, optional: boolean): Promise<unknown> {
  // GET and friends rarely carry a body: do not wait for one that is not announced.
  const announced = Number(c.req.header("content-length") ?? 0) > 0 || c.req.header("transfer-encoding") !== undefined;
  const text = announced ? await c.req.text() : "";
  if (text.trim() === "") {
    if (optional) return {};
    throw new WardrikError("bad_request", "The request needs a JSON body.");
  }
  // Reading, parsing and acting on a large body are each work enough for one turn of the event loop:
  // other requests (other orgs') are answered between them instead of after all three.
  const large = text.length >= LARGE_BODY_CHARS;
  if (large) await nextLoopTurn();
  const body = parseRequestJson(c, text);
  if (large) await nextLoopTurn();
  return body;
}

/** A body of this many characters or more is read, parsed and handled in separate turns of the event loop. */
const LARGE_BODY_CHARS = 64 * 1024;
