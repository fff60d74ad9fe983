import { expectTypeOf, test } from "vitest";
import { z } from "zod";
import { defineTool } from "@wardrik/sdk";
import { createToolContext, runTool, type TestToolContext } from "@wardrik/testing";

const tool = defineTool({
  name: "find_order",
  input: z.object({ order_id: z.string(), limit: z.number().default(10) }),
  run: async ({ order_id, limit }) => ({ id: order_id, limit }),
});

test("runTool takes the input side of the schema and resolves with run's return type", () => {
  expectTypeOf(runTool(tool, { order_id: "ord_1" })).toEqualTypeOf<Promise<{ id: string; limit: number }>>();
  // @ts-expect-error -- order_id is required
  void runTool(tool, {});
  // @ts-expect-error -- order_id is a string
  void runTool(tool, { order_id: 1 });
});

test("the test context is a tool context with what the tool recorded", () => {
  const ctx = createToolContext();
  expectTypeOf(ctx).toEqualTypeOf<TestToolContext>();
  expectTypeOf(ctx.costs).toEqualTypeOf<number[]>();
  void runTool(tool, { order_id: "a" }, ctx);
  void runTool(tool, { order_id: "a" }, { agent: "agt_x" });
});
