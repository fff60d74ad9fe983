import { expectTypeOf, test } from "vitest";
import { z } from "zod";
import { Wardrik, defineTool, type ToolContext, type ToolDefinition } from "../src/index.js";

const wardrik = new Wardrik({ url: "http://127.0.0.1:7373", token: "t" });

test("run's first argument is inferred from the input schema (its output side)", () => {
  wardrik.tool({
    name: "find_order",
    description: "Find an order.",
    input: z.object({
      payment_intent: z.string().describe("Stripe payment intent ID"),
      limit: z.number().default(10),
      tags: z.array(z.string()).optional(),
      cents: z.string().transform(Number),
    }),
    readOnly: true,
    run: (args, ctx) => {
      expectTypeOf(args).toEqualTypeOf<{ payment_intent: string; limit: number; tags?: string[] | undefined; cents: number }>();
      expectTypeOf(ctx).toEqualTypeOf<ToolContext>();
      return { id: args.payment_intent };
    },
  });
});

test("ctx has exactly agent, run, idempotencyKey, signal, cost and the optional traceparent", () => {
  expectTypeOf<keyof ToolContext>().toEqualTypeOf<"agent" | "run" | "idempotencyKey" | "signal" | "cost" | "traceparent">();
  expectTypeOf<ToolContext["traceparent"]>().toEqualTypeOf<string | undefined>();
  expectTypeOf<ToolContext["signal"]>().toEqualTypeOf<AbortSignal>();
  expectTypeOf<ToolContext["cost"]>().toEqualTypeOf<(usd: number) => void>();
});

test("tool() takes exactly the keys of the Write tools page", () => {
  expectTypeOf<keyof ToolDefinition>().toEqualTypeOf<"name" | "description" | "title" | "input" | "readOnly" | "idempotent" | "run">();
  wardrik.tool({
    name: "t",
    description: "d",
    input: z.object({}),
    run: () => "ok",
    // @ts-expect-error -- not a key of a tool definition
    retries: 3,
  });
});

test("input must be a zod object schema", () => {
  wardrik.tool({
    name: "t",
    description: "d",
    // @ts-expect-error -- a string schema is not an object schema
    input: z.string(),
    run: () => "ok",
  });
  wardrik.tool({ name: "strict", description: "d", input: z.strictObject({ a: z.string() }), run: ({ a }) => a });
  wardrik.tool({ name: "loose", description: "d", input: z.looseObject({ a: z.number() }), run: ({ a }) => a + 1 });
});

test("description is optional (the model then gets the title or the name)", () => {
  wardrik.tool({ name: "refund_order", input: z.object({ orderId: z.string() }), idempotent: true, run: ({ orderId }) => orderId });
});

test("tool() and defineTool() return the tool with its inferred types", () => {
  const input = z.object({ id: z.string(), n: z.number().default(1) });
  const registered = wardrik.tool({ name: "a", input, run: ({ id, n }) => ({ id, n }) });
  expectTypeOf(registered).toEqualTypeOf<ToolDefinition<typeof input, { id: string; n: number }>>();

  const defined = defineTool({ name: "b", input, run: async ({ id }) => id });
  expectTypeOf(defined).toEqualTypeOf<ToolDefinition<typeof input, Promise<string>>>();
  expectTypeOf(defined.run).parameter(0).toEqualTypeOf<{ id: string; n: number }>();
  // A defined tool registers as it is.
  expectTypeOf(wardrik.tool(defined)).toEqualTypeOf(defined);
});
