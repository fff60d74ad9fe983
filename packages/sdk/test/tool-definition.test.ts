import { describe, expect, test } from "vitest";
import { z } from "zod";
import { checkTool, formatIssues, parseArgs, serializeResult } from "../src/tool.js";

const base = { description: "d", input: z.object({ a: z.string().describe("The A") }), run: () => "ok" };

describe("checkTool", () => {
  test("a valid tool gets its input-side JSON Schema, .describe() texts kept, no $schema", () => {
    const result = checkTool({
      ...base,
      name: "find_order",
      title: "Find",
      readOnly: true,
      input: z.object({ a: z.string().describe("The A"), n: z.number().default(3) }),
    });
    expect(result).toMatchObject({
      ok: true,
      tool: {
        descriptor: {
          name: "find_order",
          title: "Find",
          description: "d",
          readOnly: true,
          idempotent: false,
          inputSchema: {
            type: "object",
            properties: { a: { type: "string", description: "The A" }, n: { type: "number", default: 3 } },
            required: ["a"],
          },
        },
      },
    });
  });

  test("without a description the model gets the title, else the name", () => {
    const descriptor = (def: Record<string, unknown>) => {
      const r = checkTool({ name: "refund_order", input: z.object({}), run: () => "ok", ...def });
      return r.ok ? r.tool.descriptor : r.reason;
    };
    expect(descriptor({})).toMatchObject({ description: "refund_order" });
    expect(descriptor({ title: "Refund an order" })).toMatchObject({ description: "Refund an order", title: "Refund an order" });
    expect(descriptor({ description: "  ", title: "Refund" })).toMatchObject({ description: "Refund" });
    expect(descriptor({ description: 3 })).toBe("description must be a string");
  });

  test.each([
    ["", "invalid name"],
    ["x".repeat(56), "invalid name"],
    ["has space", "invalid name"],
    ["ns/tool", "invalid name"],
  ])("name %j is refused", (name, reason) => {
    expect(checkTool({ ...base, name })).toMatchObject({ ok: false, name, reason: expect.stringContaining(reason) });
  });

  test("55 letters, digits, _ and - are fine", () => {
    expect(checkTool({ ...base, name: "a-B_9".padEnd(55, "x") }).ok).toBe(true);
  });

  test.each([
    [z.string(), "got a zod string schema"],
    [z.array(z.string()), "got a zod array schema"],
    [{ type: "object" }, "got object"],
    [undefined, "got undefined"],
  ])("input %# that is not a zod object schema is refused", (input, detail) => {
    const result = checkTool({ ...base, name: "t", input });
    expect(result).toMatchObject({ ok: false, reason: expect.stringContaining("input is not a zod object schema") });
    expect(result.ok ? "" : result.reason).toContain(detail);
  });

  test("an input JSON Schema cannot express is refused with the reason", () => {
    expect(checkTool({ ...base, name: "t", input: z.object({ when: z.date() }) })).toMatchObject({
      ok: false,
      reason: expect.stringContaining("cannot be expressed as JSON Schema"),
    });
  });
});

describe("arguments", () => {
  test("validation messages name the path", async () => {
    const input = z.object({ items: z.array(z.object({ sku: z.string() })), note: z.string() });
    expect(await parseArgs("order", input, { items: [{ sku: 1 }] })).toEqual({
      ok: false,
      error:
        "Invalid arguments for order: items[0].sku: Invalid input: expected string, received number; note: Invalid input: expected string, received undefined",
    });
  });

  test("async refinements are supported", async () => {
    const input = z.object({ a: z.string().refine(async (v) => v.startsWith("ok"), "must start with ok") });
    expect(await parseArgs("t", input, { a: "no" })).toEqual({ ok: false, error: "Invalid arguments for t: a: must start with ok" });
    expect(await parseArgs("t", input, { a: "ok!" })).toEqual({ ok: true, value: { a: "ok!" } });
  });

  test("formatIssues without a path is just the message", () => {
    expect(formatIssues(z.object({}).safeParse(null).error!.issues)).toBe("Invalid input: expected object, received null");
  });
});

describe("serializeResult", () => {
  test("objects, strings and undefined", () => {
    expect(serializeResult({ a: 1, d: new Date(0) })).toEqual({ ok: true, json: '{"a":1,"d":"1970-01-01T00:00:00.000Z"}' });
    expect(serializeResult("text")).toEqual({ ok: true, json: '"text"' });
    expect(serializeResult(undefined)).toEqual({ ok: true, json: "null" });
  });

  test.each([
    [{ n: 1n }, 'a BigInt at "n"'],
    [() => 1, "a function"],
    [{ m: new Map() }, 'a Map at "m"'],
    [{ s: Symbol("x") }, 'a symbol at "s"'],
  ])("%# is a clear error", (value, detail) => {
    const result = serializeResult(value);
    expect(result.ok).toBe(false);
    expect(result.ok ? "" : result.error).toContain(detail);
  });

  test("a circular value is a clear error on one line", () => {
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    const result = serializeResult(loop);
    expect(result.ok ? "" : result.error).toMatch(
      /^The tool's result cannot be sent as JSON: Converting circular structure to JSON [^\n]+$/,
    );
  });
});
