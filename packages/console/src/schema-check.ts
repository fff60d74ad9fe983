import { Validator, type Schema } from "@cfworker/json-schema";
import { describeSchemaErrors, schemaDraftOf } from "@wardrik/protocol";

/**
 * Checks edited arguments against a tool's input schema before they are sent.
 * The daemon checks them again with the same validator and the same wording
 * (describeSchemaErrors in @wardrik/protocol), so the page and the API agree.
 */
export function schemaProblems(schema: Record<string, unknown>, value: unknown): string[] {
  const result = new Validator(schema as Schema, schemaDraftOf(schema), false).validate(value);
  return result.valid ? [] : describeSchemaErrors(result.errors);
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
