/** `runTool`: a tool as a value, unit-tested without a daemon. */
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { Wardrik, defineTool } from "@wardrik/sdk";
import { ToolCallError, createToolContext, runTool } from "@wardrik/testing";

// A tool in a module of its own, as an application would write it.
const orders = new Map([["ord_1234", { id: "ord_1234", status: "shipped", email: "a@example.com" }]]);
const findOrder = defineTool({
  name: "find_order",
  description: "Find an order by ID.",
  input: z.object({ order_id: z.string(), with_items: z.boolean().default(false) }),
  readOnly: true,
  run: async ({ order_id, with_items }, { agent, cost }) => {
    const order = orders.get(order_id);
    if (!order) throw new Error(`No order ${order_id}. Order IDs look like ord_1234.`);
    cost(0.01);
    cost(0.02);
    return { id: order.id, status: order.status, agent, with_items };
  },
});

describe("runTool", () => {
  test("validates the arguments (defaults applied), passes the context, returns what run returned", async () => {
    const ctx = createToolContext({ agent: "agt_01JF8X5RQ2M3V9ZK0B7Y4T6WHN" });
    const out = await runTool(findOrder, { order_id: "ord_1234" }, ctx);
    expect(out).toEqual({ id: "ord_1234", status: "shipped", agent: "agt_01JF8X5RQ2M3V9ZK0B7Y4T6WHN", with_items: false });
    expect(ctx.costs).toEqual([0.01, 0.02]);
    expect(ctx.totalCost).toBeCloseTo(0.03);
  });

  test("a thrown error rejects with the message the model would read", async () => {
    const err = await runTool(findOrder, { order_id: "ord_9" }).catch((e: unknown) => e);
    expect(ToolCallError.isInstance(err)).toBe(true);
    expect(err).toMatchObject({ tool: "find_order", message: "No order ord_9. Order IDs look like ord_1234." });
  });

  test("bad arguments fail as the worker would fail them", async () => {
    // @ts-expect-error -- a number where the schema wants a string
    await expect(runTool(findOrder, { order_id: 42 })).rejects.toThrow(
      "Invalid arguments for find_order: order_id: Invalid input: expected string, received number",
    );
  });

  test("a result that cannot be sent as JSON fails the call", async () => {
    const tool = defineTool({ name: "bad_result", input: z.object({}), run: () => ({ when: 1n }) });
    await expect(runTool(tool, {})).rejects.toThrow('The tool\'s result cannot be sent as JSON: a BigInt at "when"');
  });

  test("the default context: agent, run and idempotencyKey are set, the signal is live", async () => {
    const tool = defineTool({
      name: "ctx",
      input: z.object({}),
      run: (_a, c) => ({ agent: c.agent, run: c.run, key: c.idempotencyKey, aborted: c.signal.aborted }),
    });
    expect(await runTool(tool, {})).toEqual({ agent: "agt_test", run: "run_test", key: "key_test", aborted: false });
    expect(await runTool(tool, {}, { idempotencyKey: "key_2", run: "run_2" })).toMatchObject({ key: "key_2", run: "run_2" });
  });

  test("abort() stops the call with the reason a worker gives; timeoutMs times it out", async () => {
    const waits = defineTool({
      name: "waits",
      input: z.object({}),
      run: (_a, { signal }) => {
        signal.throwIfAborted();
        return new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason as Error), { once: true }));
      },
    });
    const ctx = createToolContext();
    const running = runTool(waits, {}, ctx);
    ctx.abort("killed");
    await expect(running).rejects.toThrow("The call was killed.");
    expect((ctx.signal.reason as Error).name).toBe("AbortError");

    const timed = createToolContext({ timeoutMs: 20 });
    await expect(runTool(waits, {}, timed)).rejects.toThrow("The call timed out.");
    expect((timed.signal.reason as Error).name).toBe("TimeoutError");
  });

  test("cost() refuses what a worker refuses", async () => {
    const tool = defineTool({ name: "neg", input: z.object({}), run: (_a, { cost }) => cost(-1) });
    await expect(runTool(tool, {})).rejects.toThrow("cost(usd) takes a non-negative number of US dollars; got -1.");
  });

  test("wardrik.tool() returns the tool it registered, so the same value is testable", async () => {
    const wardrik = new Wardrik({ url: "http://127.0.0.1:1", token: "t", onWarning: () => {} });
    const tool = wardrik.tool({ name: "echo", input: z.object({ text: z.string() }), run: ({ text }) => text.toUpperCase() });
    expect(await runTool(tool, { text: "hi" })).toBe("HI");
  });

  test("an invalid tool is reported as the worker would skip it", async () => {
    const tool = defineTool({ name: "has space", input: z.object({}), run: () => "x" });
    await expect(runTool(tool, {})).rejects.toThrow('The tool "has space" would be skipped: invalid name');
  });
});
