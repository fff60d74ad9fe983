import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { callContext, spawnWorker, startDaemon, workerEnv, type TestDaemon, type WorkerProcess } from "./helpers.js";

// One real worker process (the SDK, from source) serving the fixture's tools.
let daemon: TestDaemon;
let worker: WorkerProcess;

beforeAll(async () => {
  daemon = await startDaemon();
  worker = spawnWorker("tools-worker.ts", workerEnv(daemon));
  expect(await daemon.gateway.waitForTool("org-a", "find_order", 20_000)).toBe(true);
});

afterAll(async () => {
  await worker?.stop();
  await daemon?.close();
});

describe("what the model receives", () => {
  test("the input JSON Schema with .describe() texts, the description and the flags", () => {
    const tools = daemon.gateway.list({ org: "org-a", agentId: "agt_test" });
    const findOrder = tools.find((t) => t.name === "workers/find_order");
    expect(findOrder).toEqual({
      name: "workers/find_order",
      title: "Find order",
      description: "Find the order associated with a Stripe payment intent.",
      inputSchema: {
        type: "object",
        properties: { payment_intent: { type: "string", description: "Stripe payment intent ID, such as pi_123" } },
        required: ["payment_intent"],
      },
      readOnly: true,
      idempotent: false,
    });
    expect(tools.find((t) => t.name === "workers/slow_idempotent")).toMatchObject({ readOnly: false, idempotent: true });
  });

  test("a tool with a bad name and one with a non-object input are skipped with warnings; the others register", async () => {
    const badName = await worker.waitFor((e) => e.event === "warning" && String(e.message).includes('"bad name!"'));
    expect(badName.message).toContain("invalid name: a tool name is 1 to 55 letters, digits, _ or -");
    const notObject = await worker.waitFor((e) => e.event === "warning" && String(e.message).includes('"not_object"'));
    expect(notObject.message).toContain("input is not a zod object schema");
    const names = daemon.gateway
      .list({ org: "org-a", agentId: "agt_test" })
      .map((t) => t.name)
      .sort();
    expect(names).toEqual([
      "workers/bad_result",
      "workers/echo_ctx",
      "workers/enrich",
      "workers/find_order",
      "workers/refund_order",
      "workers/slow_idempotent",
      "workers/slow_write",
      "workers/wait_for_abort",
    ]);
  });
});

describe("calls", () => {
  test("a valid call returns the tool's object", async () => {
    const outcome = await daemon.gateway.call("find_order", { payment_intent: "pi_123" }, callContext().ctx);
    expect(outcome).toEqual({ ok: true, output: { id: "ord_1", payment_intent: "pi_123" } });
  });

  test("invalid arguments fail with the validation message, path by path", async () => {
    const outcome = await daemon.gateway.call("refund_order", { orderId: 5 }, callContext().ctx);
    expect(outcome).toEqual({
      ok: false,
      kind: "failed",
      error:
        "Invalid arguments for refund_order: orderId: Invalid input: expected string, received number; amount: Invalid input: expected number, received undefined",
    });
  });

  test("ctx carries the agent, run and idempotency key set by Wardrik; an `agent` argument changes nothing", async () => {
    const { ctx } = callContext({ agent: "agt_real", run: "run_42", idempotencyKey: "key_7" });
    const outcome = await daemon.gateway.call("echo_ctx", { note: "hi", agent: "agt_forged" }, ctx);
    expect(outcome).toEqual({
      ok: true,
      output: { args: { note: "hi" }, agent: "agt_real", run: "run_42", idempotencyKey: "key_7", worker: "w1" },
    });
  });

  test("a thrown error fails the call with its message", async () => {
    const outcome = await daemon.gateway.call("refund_order", { orderId: "ord_9", amount: 10 }, callContext().ctx);
    expect(outcome).toEqual({ ok: false, kind: "failed", error: "No order ord_9. Order IDs look like ord_1234." });
  });

  test.each([
    ["bigint", 'a BigInt at "total"'],
    ["circular", "Converting circular structure to JSON"],
    ["function", 'a function at "later"'],
  ])("a %s result is a clear error, and the worker keeps serving", async (kind, detail) => {
    const outcome = await daemon.gateway.call("bad_result", { kind }, callContext().ctx);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.kind).toBe("failed");
    expect(outcome.error).toContain("The tool's result cannot be sent as JSON");
    expect(outcome.error).toContain(detail);
    expect((await daemon.gateway.call("find_order", { payment_intent: "pi_1" }, callContext().ctx)).ok).toBe(true);
  });

  test("calling cost twice adds both amounts", async () => {
    const { ctx, costs } = callContext();
    const outcome = await daemon.gateway.call("enrich", { email: "a@example.com" }, ctx);
    expect(outcome).toEqual({ ok: true, output: "found a@example.com" });
    expect(costs).toEqual([0.01, 0.02]);
  });

  test("many concurrent calls all complete", async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, (_, i) => daemon.gateway.call("find_order", { payment_intent: `pi_${i}` }, callContext().ctx)),
    );
    expect(outcomes.every((o, i) => o.ok && (o.output as { payment_intent: string }).payment_intent === `pi_${i}`)).toBe(true);
  });

  test("a call that may no longer start (its node lost the agent while it waited) never reaches the worker", async () => {
    // As a node frozen past its lease, whose agent another node took over, asks before it sends (Ownership.heldNow).
    const stale = callContext({ mayStart: () => Promise.resolve(false) }).ctx;
    expect(await daemon.gateway.call("slow_write", { tag: "stale-1", ms: 0 }, stale)).toEqual({
      ok: false,
      kind: "killed",
      error: "workers/slow_write was not sent: this node no longer runs it.",
    });
    // Asked and allowed after a wait: it goes. A call sent after the refused one, on the same socket: had the refused
    // one left, the worker would have reported it first.
    const allowed = callContext({ mayStart: () => Promise.resolve(true) }).ctx;
    expect(await daemon.gateway.call("slow_write", { tag: "stale-2", ms: 0 }, allowed)).toMatchObject({ ok: true });
    await worker.waitFor((e) => e.event === "started" && e.tag === "stale-2");
    expect(worker.events.filter((e) => e.event === "started" && String(e.tag).startsWith("stale-")).map((e) => e.tag)).toEqual(["stale-2"]);
  });

  test("status lists the connected worker", () => {
    expect(daemon.gateway.status({ org: "org-a", agentId: "agt_test" })).toEqual([
      expect.objectContaining({ name: expect.stringContaining("worker w1 (wkr_"), status: "connected" }),
    ]);
    expect(daemon.gateway.status({ org: "org-b", agentId: "agt_test" })).toEqual([]);
  });
});
