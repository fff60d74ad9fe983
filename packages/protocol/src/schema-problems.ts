/**
 * How a JSON Schema validator's complaints about a call's arguments read to a
 * person. The daemon (approving edited arguments) and the web console
 * (checking them before it sends) run the same validator,
 * `@cfworker/json-schema`, and word its errors here, so both say the same
 * thing. The validator itself stays with each side: this package carries no
 * dependency for it.
 */

/** The fields of one `@cfworker/json-schema` error (its OutputUnit) that the wording reads. */
export interface SchemaErrorUnit {
  keyword: string;
  instanceLocation: string;
  error: string;
}

/** The drafts `@cfworker/json-schema` knows, as its Validator names them. */
export type SchemaDraftName = "4" | "7" | "2019-09" | "2020-12";

/** The draft a schema declares with `$schema`; 2020-12 when it declares none (what MCP and the SDK write). */
export function schemaDraftOf(schema: Record<string, unknown>): SchemaDraftName {
  const id = typeof schema.$schema === "string" ? schema.$schema : "";
  if (id.includes("draft-04")) return "4";
  if (id.includes("draft-06") || id.includes("draft-07")) return "7";
  if (id.includes("2019-09")) return "2019-09";
  return "2020-12";
}

/** Keywords whose error only says "something below failed"; the error below says what. */
const WRAPPERS = new Set(["properties", "items", "prefixItems", "additionalItems", "allOf", "$ref", "false", "patternProperties"]);

/**
 * One readable line per problem, such as `arguments.items[0] needs property "sku"`; the wrappers' echoes left out.
 * `root` names the checked value (`arguments`, `reply`).
 */
export function describeSchemaErrors(errors: readonly SchemaErrorUnit[], root = "arguments"): string[] {
  return errors.filter((e) => !WRAPPERS.has(e.keyword)).map((e) => describe(e, root));
}

function describe(e: SchemaErrorUnit, root: string): string {
  const where =
    root + e.instanceLocation.replace(/^#/, "").replace(/\/([^/]*)/g, (_m, key: string) => (/^\d+$/.test(key) ? `[${key}]` : `.${key}`));
  const required = /required property "(.*)"/.exec(e.error);
  if (e.keyword === "required" && required) return `${where} needs property "${required[1]}"`;
  const extra = /Property "(.*)" does not match additional properties schema/.exec(e.error);
  if (e.keyword === "additionalProperties" && extra)
    return `${where} has property "${extra[1]}", which ${root === "arguments" ? "the tool does not take" : "the schema does not allow"}`;
  return `${where}: ${e.error.replace(/\.$/, "")}`;
}
