import { Validator } from "@cfworker/json-schema";
import { describe, expect, it } from "vitest";
import { describeSchemaErrors, schemaDraftOf } from "../src/index.js";

/** What the daemon and the console both do with edited arguments. */
function problems(schema: Record<string, unknown>, value: unknown): string[] {
  const result = new Validator(schema, schemaDraftOf(schema), false).validate(value);
  return result.valid ? [] : describeSchemaErrors(result.errors);
}

const ORDER = {
  type: "object",
  properties: {
    order: { type: "string" },
    items: { type: "array", items: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] } },
  },
  required: ["order"],
  additionalProperties: false,
};

describe("describeSchemaErrors", () => {
  it("says where each problem is, in the arguments' own terms, without the wrappers' echoes", () => {
    expect(problems(ORDER, { order: "o1" })).toEqual([]);
    expect(problems(ORDER, { items: [{}], mode: "x" })).toEqual([
      'arguments needs property "order"',
      'arguments.items[0] needs property "sku"',
      'arguments has property "mode", which the tool does not take',
    ]);
    expect(problems(ORDER, { order: 7 })).toEqual(['arguments.order: Instance type "number" is invalid. Expected "string"']);
  });

  it("reads the draft a schema declares, 2020-12 when it declares none", () => {
    expect(schemaDraftOf({ $schema: "http://json-schema.org/draft-07/schema#" })).toBe("7");
    expect(schemaDraftOf({ $schema: "http://json-schema.org/draft-04/schema#" })).toBe("4");
    expect(schemaDraftOf({ $schema: "https://json-schema.org/draft/2019-09/schema" })).toBe("2019-09");
    expect(schemaDraftOf({})).toBe("2020-12");
  });
});
