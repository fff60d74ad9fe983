import { Validator, type OutputUnit, type Schema, type SchemaDraft } from "@cfworker/json-schema";

/**
 * Checks edited arguments against a tool's input schema before they are sent.
 * The daemon checks them again with the same validator and the same wording
 * (packages/daemon/src/http/edited-arguments.ts), so the page and the API agree.
 */
export function schemaProblems(schema: Record<string, unknown>, value: unknown): string[] {
  const result = new Validator(schema as Schema, draftOf(schema), false).validate(value);
  if (result.valid) return [];
  return result.errors.filter((e) => !WRAPPERS.has(e.keyword)).map(describe);
}

/** Parses the text of the arguments editor: the value, or what is wrong with it. */
export function parseArguments(text: string): { value: Record<string, unknown> } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { problem: `Not valid JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { problem: "The arguments must be a JSON object." };
  return { value: value as Record<string, unknown> };
}

const WRAPPERS = new Set(["properties", "items", "prefixItems", "additionalItems", "allOf", "$ref", "false", "patternProperties"]);

function describe(e: OutputUnit): string {
  const where =
    "arguments" +
    e.instanceLocation.replace(/^#/, "").replace(/\/([^/]*)/g, (_m, key: string) => (/^\d+$/.test(key) ? `[${key}]` : `.${key}`));
  const required = /required property "(.*)"/.exec(e.error);
  if (e.keyword === "required" && required) return `${where} needs property "${required[1]}"`;
  const extra = /Property "(.*)" does not match additional properties schema/.exec(e.error);
  if (e.keyword === "additionalProperties" && extra) return `${where} has property "${extra[1]}", which the tool does not take`;
  return `${where}: ${e.error.replace(/\.$/, "")}`;
}

function draftOf(schema: Record<string, unknown>): SchemaDraft {
  const id = typeof schema.$schema === "string" ? schema.$schema : "";
  if (id.includes("draft-04")) return "4";
  if (id.includes("draft-06") || id.includes("draft-07")) return "7";
  if (id.includes("2019-09")) return "2019-09";
  return "2020-12";
}
