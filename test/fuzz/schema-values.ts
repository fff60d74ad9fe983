/**
 * Values for a JSON Schema of the daemon's OpenAPI document: what a route
 * says it takes, so the fuzzer's requests get past the first checks and reach
 * the handlers. Names of known things (agents, orgs) are used where a
 * parameter of that name is asked for.
 */
import { randomJson, randomNumber, randomString, type Random } from "./random.js";

export interface Schema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

export interface Operation {
  parameters?: { name: string; in: "path" | "query" | "header"; required?: boolean; schema?: Schema }[];
  requestBody?: { content: Record<string, { schema?: Schema }> };
  security?: unknown[];
}

/** Values the daemon knows, by parameter name: a request that names them reaches deeper. */
export type Known = Record<string, string[]>;

function resolve(doc: OpenApiDocument, schema: Schema): Schema {
  let s = schema;
  for (let i = 0; s.$ref && i < 10; i++) s = doc.components?.schemas?.[s.$ref.replace("#/components/schemas/", "")] ?? {};
  return s;
}

/** A value `schema` accepts (most of the time: patterns and formats are not followed). */
export function valueFor(r: Random, doc: OpenApiDocument, schema: Schema | undefined, known: Known, name = "", depth = 0): unknown {
  if (!schema || depth > 6) return randomJson(r, 1);
  const s = resolve(doc, schema);
  if (s.const !== undefined) return s.const;
  if (s.enum) return r.pick(s.enum);
  const choices = s.anyOf ?? s.oneOf;
  if (choices) return valueFor(r, doc, r.pick(choices), known, name, depth + 1);
  if (s.allOf) return Object.assign({}, ...(s.allOf.map((part) => valueFor(r, doc, part, known, name, depth + 1)) as object[]));
  const type = Array.isArray(s.type) ? r.pick(s.type) : s.type;
  switch (type) {
    case "string": {
      const names = known[name];
      if (names && names.length > 0 && r.chance(0.7)) return r.pick(names);
      const text = randomString(r);
      return s.maxLength !== undefined ? text.slice(0, s.maxLength) : text;
    }
    case "integer":
      return Math.max(s.minimum ?? 0, Math.min(s.maximum ?? 1000, r.int(100)));
    case "number":
      return r.chance(0.8) ? r.int(100) : randomNumber(r);
    case "boolean":
      return r.chance(0.5);
    case "array":
      return Array.from({ length: r.int(3) }, () => valueFor(r, doc, s.items, known, name, depth + 1));
    case "object":
    case undefined: {
      if (!s.properties) return type === "object" ? {} : randomJson(r, 2);
      const out: Record<string, unknown> = {};
      for (const [key, prop] of Object.entries(s.properties)) {
        if (s.required?.includes(key) || r.chance(0.5)) out[key] = valueFor(r, doc, prop, known, key, depth + 1);
      }
      return out;
    }
    default:
      return null;
  }
}
