import { describe, expect, it } from "vitest";
import { checkEditedArguments, schemaProblems as problems } from "../src/edited-arguments.js";
import { schemaDraftOf } from "../src/index.js";

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

describe("checkEditedArguments: the one check the daemon and the console run", () => {
  it("passes arguments that fit, as the object they are (text from an editor is parsed first)", () => {
    expect(checkEditedArguments("orders/make", ORDER, '{"order": "o1"}')).toEqual({ ok: true, value: { order: "o1" } });
    expect(checkEditedArguments("orders/make", ORDER, { order: "o1" })).toEqual({ ok: true, value: { order: "o1" } });
  });

  it("refuses text that is not JSON, or not an object, saying so", () => {
    const notJson = checkEditedArguments("orders/make", ORDER, "{order: o1}");
    expect(notJson).toMatchObject({ ok: false, code: "bad_request", problems: [expect.stringMatching(/^Not valid JSON: /)] });
    expect(checkEditedArguments("orders/make", ORDER, ["o1"])).toMatchObject({
      ok: false,
      problems: ["The arguments must be a JSON object."],
    });
  });

  it("refuses what does not fit the schema with the API's message, every problem in it", () => {
    const c = checkEditedArguments("orders/make", ORDER, { extra: 1 });
    expect(c).toEqual({
      ok: false,
      code: "bad_request",
      problems: ['arguments needs property "order"', 'arguments has property "extra", which the tool does not take'],
      message:
        "Invalid request: body.arguments do not fit orders/make's input schema: " +
        'arguments needs property "order"; arguments has property "extra", which the tool does not take.',
    });
  });

  it("with no schema (no worker offers the tool now) nothing can be checked: a conflict, not bad input", () => {
    const c = checkEditedArguments("orders/make", undefined, { order: "o1" });
    expect(c).toMatchObject({ ok: false, code: "conflict" });
    expect(!c.ok && c.message).toMatch(
      /^Tool orders\/make is not available right now .*Approve without editing, or wait until it is back\.$/,
    );
  });
});
