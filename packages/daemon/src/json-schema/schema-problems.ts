import type { Schema } from "@cfworker/json-schema";
import { describeSchemaErrors, schemaDraftOf } from "@wardrik/protocol";
import { loadOptionalModule } from "../optional-modules.js";

/**
 * What is wrong with `value` under `schema`, one readable line per problem
 * (`root` names the value in them); empty when it fits. The validator loads
 * with the first check, which many daemons never make.
 */
export async function schemaProblems(schema: Record<string, unknown>, value: unknown, root = "arguments"): Promise<string[]> {
  const { Validator } = await loadOptionalModule(
    "@cfworker/json-schema",
    "arguments edited in an approval and agents' output schemas",
    () => import("@cfworker/json-schema"),
  );
  const result = new Validator(schema as Schema, schemaDraftOf(schema), false).validate(value);
  return result.valid ? [] : describeSchemaErrors(result.errors, root);
}
