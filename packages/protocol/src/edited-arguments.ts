/**
 * `@wardrik/protocol/edited-arguments`: the one check of arguments a person
 * edited before approving a call. The daemon runs it before it approves (and
 * refuses what fails, with these words); the web console runs it as the
 * person types, so the page and the API always agree. A tool never receives
 * what its input schema does not take. Browser-safe; its own entry, so what
 * imports the package's main entry does not load the validator.
 */
import { Validator, type Schema } from "@cfworker/json-schema";
import { describeSchemaErrors, schemaDraftOf } from "./schema-problems.js";

/** What is wrong with `value` under `schema`, one readable line per problem (`root` names the value); empty when it fits. */
export function schemaProblems(schema: Record<string, unknown>, value: unknown, root = "arguments"): string[] {
  const result = new Validator(schema as Schema, schemaDraftOf(schema), false).validate(value);
  return result.valid ? [] : describeSchemaErrors(result.errors, root);
}

/** The outcome of the check: fits, or why not (`code` the API's error code for it) with a message for a person. */
export type EditedArgumentsCheck =
  { ok: true; value: Record<string, unknown> } | { ok: false; code: "bad_request" | "conflict"; problems: string[]; message: string };

/**
 * Checks edited arguments for a call of `tool`: a JSON object (text is parsed
 * first, as an editor holds it) that fits the tool's input schema.
 * `schema` undefined: no connected worker or server offers the tool now, so
 * nothing can be checked, and approving with edits waits until it is back.
 */
export function checkEditedArguments(tool: string, schema: Record<string, unknown> | undefined, args: unknown): EditedArgumentsCheck {
  let value = args;
  if (typeof args === "string") {
    try {
      value = JSON.parse(args);
    } catch (e) {
      return refused("bad_request", [`Not valid JSON: ${e instanceof Error ? e.message : String(e)}`], tool);
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return refused("bad_request", ["The arguments must be a JSON object."], tool);
  if (schema === undefined) {
    return {
      ok: false,
      code: "conflict",
      problems: [`${tool} is not available right now, so edited arguments cannot be checked against its schema.`],
      message: `Tool ${tool} is not available right now (no connected worker or server offers it), so edited arguments cannot be checked against its schema. Approve without editing, or wait until it is back.`,
    };
  }
  const problems = schemaProblems(schema, value);
  if (problems.length > 0) return refused("bad_request", problems, tool);
  return { ok: true, value: value as Record<string, unknown> };
}

function refused(code: "bad_request", problems: string[], tool: string): EditedArgumentsCheck {
  return {
    ok: false,
    code,
    problems,
    message: `Invalid request: body.arguments do not fit ${tool}'s input schema: ${problems.join("; ")}.`,
  };
}
