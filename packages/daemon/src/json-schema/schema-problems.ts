import type * as EditedArguments from "@wardrik/protocol/edited-arguments";
import { loadOptionalModule } from "../optional-modules.js";

/** The check of edited arguments and its validator (`@wardrik/protocol/edited-arguments`), loaded with the first check, which many daemons never make. */
export function editedArgumentsModule(): Promise<typeof EditedArguments> {
  return loadOptionalModule(
    "@cfworker/json-schema",
    "arguments edited in an approval and agents' output schemas",
    () => import("@wardrik/protocol/edited-arguments"),
  );
}

/**
 * What is wrong with `value` under `schema`, one readable line per problem
 * (`root` names the value in them); empty when it fits. The same check and
 * wording as the web console's (`@wardrik/protocol/edited-arguments`).
 */
export async function schemaProblems(schema: Record<string, unknown>, value: unknown, root = "arguments"): Promise<string[]> {
  return (await editedArgumentsModule()).schemaProblems(schema, value, root);
}
