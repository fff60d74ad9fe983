import { agentStatus } from "../../src/store/rows.js";
import { afterEach, describe, expect, it } from "vitest";
import type { Policy } from "../../src/policy/types.js";
import { createHarness, FnToolset, type Harness } from "../helpers/runtime-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const call = (tool: string, args: Record<string, unknown> = {}) => ({ tool, args });

function shop(log: string[]) {
  return new FnToolset("shop")
    .add(
      "find",
      (args) => {
        log.push(`find ${JSON.stringify(args)}`);
        return { ok: true, output: { found: true } };
      },
      { readOnly: true },
    )
    .add("refund", (args) => {
      log.push(`refund ${JSON.stringify(args)}`);
      return { ok: true, output: { refunded: (args as { amount: number }).amount } };
    })
    .add("note", (args) => {
      log.push(`note ${JSON.stringify(args)}`);
      return { ok: true, output: "noted" };
    });
}

const policy: Policy = {
  name: "careful",
  rules: [
    { tool: "shop/refund", when: { amount: { gt: 100 } }, decision: "deny", reason: "Refunds over $100 go through finance." },
    { tool: "shop/find", when: { id: { eq: "secret" } }, decision: "deny", reason: "That order is sealed." },
    { tool: "shop/note", decision: "allow" },
  ],
};

describe("policies in the turn loop", () => {
  it("deny: the call never runs and the model gets the rule's reason", async () => {
    const log: string[] = [];
    h = await createHarness({ toolsets: [shop(log)], policy });
    const a = await h.agent({
      name: "a",
      script: { steps: [{ tool_calls: [call("shop/refund", { amount: 500 })] }, { text: "{{result}}" }] },
    });
    const end = await h.ask(a, "refund");
    expect(log).toEqual([]);
    expect(end.data.reply).toContain("Refunds over $100 go through finance.");
  });

  it("an explicit rule denies a read-only tool; read-only tools are allowed by default", async () => {
    const log: string[] = [];
    h = await createHarness({ toolsets: [shop(log)], policy });
    const a = await h.agent({
      name: "a",
      script: { steps: [{ tool_calls: [call("shop/find", { id: "secret" }), call("shop/find", { id: "o1" })] }, { text: "ok" }] },
    });
    await h.ask(a, "find");
    expect(log).toEqual(['find {"id":"o1"}']);
    const decided = h.events.filter((e) => e.type === "dev.wardrik.call.decided");
    expect(decided.map((e) => e.data.decision)).toEqual(["deny", "allow"]);
    // A deny is a failure on the record, with its code; an allow is not.
    expect(decided[0]!.data).toMatchObject({ code: "denied", retryable: false });
    expect(decided[1]!.data).not.toHaveProperty("code");
  });

  it("ask: the turn parks, the agent is parked, approve runs the call and the turn finishes", async () => {
    const log: string[] = [];
    h = await createHarness({ toolsets: [shop(log)], policy });
    const a = await h.agent({
      name: "a",
      script: { steps: [{ tool_calls: [call("shop/refund", { amount: 20 })] }, { text: "result: {{result}}" }] },
    });
    const q = await h.runtime.enqueue(a, "main", "refund 20");
    const asked = await h.waitFor((e) => e.type === "dev.wardrik.approval.requested");
    expect(asked.data).toMatchObject({ tool: "shop/refund", args: { amount: 20 }, reason: expect.stringMatching(/needs approval/) });
    await h.waitFor((e) => e.type === "dev.wardrik.turn.parked");
    expect(agentStatus((await h.store.agents.get(a.id))!)).toBe("parked");
    expect(log).toEqual([]);
    await expect(h.runtime.approve(a, "call_NOPE")).rejects.toThrow(/no call call_NOPE/);
    await h.runtime.approve(a, String(asked.data.call));
    const end = await h.waitFor((e) => e.type === "dev.wardrik.turn.completed");
    expect(end.data.reply).toBe('result: {"refunded":20}');
    expect(log).toEqual(['refund {"amount":20}']);
    expect(agentStatus((await h.store.agents.get(a.id))!)).toBe("idle");
    await expect(h.runtime.approve(a, String(asked.data.call))).rejects.toThrow(/not waiting for approval \(it is completed\)/);
    expect(q.message).toMatch(/^msg_/);
  });

  it("deny by a person tells the model why", async () => {
    const log: string[] = [];
    h = await createHarness({ toolsets: [shop(log)], policy });
    const a = await h.agent({
      name: "a",
      script: { steps: [{ tool_calls: [call("shop/refund", { amount: 20 })] }, { text: "{{result}}" }] },
    });
    await h.runtime.enqueue(a, "main", "refund");
    const asked = await h.waitFor((e) => e.type === "dev.wardrik.approval.requested");
    await h.runtime.deny(a, String(asked.data.call), "not today");
    const denied = await h.waitFor((e) => e.type === "dev.wardrik.approval.denied");
    expect(denied.data).toEqual({ call: asked.data.call, tool: "shop/refund", reason: "not today", code: "denied", retryable: false });
    const end = await h.waitFor((e) => e.type === "dev.wardrik.turn.completed");
    expect(end.data.reply).toContain("A person refused this call: not today");
    expect(log).toEqual([]);
  });

  it("parallel calls with mixed decisions: allowed ones run at once, the model waits for every call, each decision reaches its call", async () => {
    const log: string[] = [];
    h = await createHarness({ toolsets: [shop(log)], policy });
    const a = await h.agent({
      name: "a",
      script: {
        steps: [
          {
            tool_calls: [
              call("shop/note", { text: "n1" }),
              call("shop/refund", { amount: 10 }),
              call("shop/refund", { amount: 500 }),
              call("shop/refund", { amount: 30 }),
              call("shop/find", { id: "o2" }),
            ],
          },
          { text: "done" },
        ],
      },
    });
    await h.runtime.enqueue(a, "main", "go");
    await h.waitFor((e) => e.type === "dev.wardrik.turn.parked");
    // The allowed calls ran while the two refunds wait; the model was called once.
    expect(log.sort()).toEqual(['find {"id":"o2"}', 'note {"text":"n1"}']);
    expect(h.models.get("a")!.calls).toHaveLength(1);
    const asked = h.events.filter((e) => e.type === "dev.wardrik.approval.requested");
    expect(asked.map((e) => (e.data.args as { amount: number }).amount)).toEqual([10, 30]);
    await h.runtime.deny(a, String(asked[1]!.data.call), "too much");
    await new Promise((r) => setTimeout(r, 50));
    expect(h.models.get("a")!.calls).toHaveLength(1);
    await h.runtime.approve(a, String(asked[0]!.data.call));
    const end = await h.waitFor((e) => e.type === "dev.wardrik.turn.completed");
    expect(end.data.reply).toBe("done");
    expect(log).toContain('refund {"amount":10}');
    expect(log).not.toContain('refund {"amount":30}');
    // The model's second call saw all five results, in order, each with its own outcome.
    const toolMsg = h.models.get("a")!.calls[1]!.prompt.find((m) => m.role === "tool")!;
    const outputs = (toolMsg.content as { output: { type: string; value: unknown } }[]).map((p) => p.output);
    expect(outputs[0]).toEqual({ type: "text", value: "noted" });
    expect(outputs[1]).toEqual({ type: "json", value: { refunded: 10 } });
    expect(outputs[2]!.type).toBe("error-text");
    expect(String(outputs[3]!.value)).toContain("too much");
    expect(outputs[4]).toEqual({ type: "json", value: { found: true } });
  });

  it("approvals survive a restart: park, restart the runtime, approve, the turn finishes", async () => {
    const log: string[] = [];
    h = await createHarness({ toolsets: [shop(log)], policy });
    const dir = h.dir;
    const script = { steps: [{ tool_calls: [call("shop/refund", { amount: 20 })] }, { text: "after restart: {{result}}" }] };
    const a = await h.agent({ name: "a", script });
    await h.runtime.enqueue(a, "main", "refund");
    const asked = await h.waitFor((e) => e.type === "dev.wardrik.approval.requested");
    await h.waitFor((e) => e.type === "dev.wardrik.turn.parked");
    await h.runtime.close();
    await h.store.db.close();
    const h2 = await createHarness({ toolsets: [shop(log)], policy, dir });
    try {
      h2.script("a", script);
      await h2.runtime.recover();
      const again = (await h2.store.agents.get(a.id))!;
      expect(agentStatus(again)).toBe("parked");
      expect((await h2.store.calls.waiting(a.id)).map((c) => c.id)).toEqual([asked.data.call]);
      await h2.runtime.approve(again, String(asked.data.call));
      const end = await h2.waitFor((e) => e.type === "dev.wardrik.turn.completed");
      expect(end.data.reply).toBe('after restart: {"refunded":20}');
      expect(log).toEqual(['refund {"amount":20}']);
    } finally {
      await h2.close();
    }
  });
});

describe("budgets", () => {
  it("a model call that would pass the daily cap is refused and the turn ends with budget.exceeded", async () => {
    h = await createHarness();
    // $1 / $2 per million tokens in the harness; the prompt and the files tools' definitions fit this cap, the first reply does not.
    const a = await h.agent({
      name: "a",
      budget: 0.001,
      script: { steps: [{ tool_calls: [call("files/list")], usage: { input: 2000, output: 10 } }, { text: "never" }] },
    });
    const end = await h.ask(a, "go");
    expect(end.type).toBe("dev.wardrik.turn.failed");
    expect(String(end.data.reason)).toMatch(/daily budget of \$0.001 would be passed/);
    // The reply alone passes the cap: the reason says what it adds, not only the $0 spent before it.
    expect(String(end.data.reason)).toMatch(/spent \$0\.0000 today, \$0\.0020 more with this step\)/);
    const exceeded = h.events.find((e) => e.run === end.run && e.type === "dev.wardrik.budget.exceeded");
    expect(exceeded?.data).toMatchObject({ refused: expect.any(String), code: "budget", retryable: false });
    expect(h.models.get("a")!.calls).toHaveLength(1);
  });

  it("the estimate before a model call counts the tool definitions: a cap the prompt fits but the tools do not refuses the call", async () => {
    // 20,000 characters of tool description: about 5,000 input tokens, $0.005 at the harness's $1 per million.
    const big = new FnToolset("big").add("lookup", () => ({ ok: true, output: "found" }), { readOnly: true });
    big.tools.get("lookup")!.info.description = "Looks things up. ".repeat(1250);
    h = await createHarness({ toolsets: [big] });
    const a = await h.agent({ name: "a", tools: ["big/*"], budget: 0.001, script: { steps: [{ text: "never called" }] } });
    const end = await h.ask(a, "go");
    expect(end.type).toBe("dev.wardrik.turn.failed");
    expect(String(end.data.reason)).toMatch(
      /daily budget of \$0.001 would be passed \(spent \$0\.0000 today, \$0\.005\d more with this step\)/,
    );
    const exceeded = h.events.find((e) => e.run === end.run && e.type === "dev.wardrik.budget.exceeded");
    expect(exceeded?.data).toMatchObject({ refused: "model call" });
    expect(h.models.get("a")!.calls).toHaveLength(0);
  });

  it("tool cost() adds to the spend, and calls add up", async () => {
    const t = new FnToolset("paid").add(
      "lookup",
      (_a, ctx) => {
        ctx.cost(0.01);
        ctx.cost(0.02);
        return { ok: true, output: "found" };
      },
      { readOnly: true },
    );
    h = await createHarness({ toolsets: [t] });
    const a = await h.agent({
      name: "a",
      script: {
        steps: [
          { tool_calls: [call("paid/lookup")], usage: { input: 0, output: 0 } },
          { text: "ok", usage: { input: 0, output: 0 } },
        ],
      },
    });
    await h.ask(a, "go");
    const spend = await h.store.spend.on(a.id, new Date().toISOString().slice(0, 10));
    // Exact: money is kept in integer micro-dollars.
    expect(spend.tools_micros).toBe(30_000);
    const done = h.events.find((e) => e.type === "dev.wardrik.call.completed")!;
    expect(done.data.cost_usd).toBeCloseTo(0.03, 10);
  });

  it("spend sums exactly on both databases: 0.000123 + 1234.5678 is 1234.567923, not a float's rounding", async () => {
    const t = new FnToolset("paid").add(
      "lookup",
      (_a, ctx) => {
        ctx.cost(0.000123);
        ctx.cost(1234.5678);
        return { ok: true, output: "found" };
      },
      { readOnly: true },
    );
    h = await createHarness({ toolsets: [t] });
    const a = await h.agent({
      name: "rich",
      budget: 10_000,
      script: {
        steps: [
          { tool_calls: [call("paid/lookup")], usage: { input: 0, output: 0 } },
          { tool_calls: [call("paid/lookup")], usage: { input: 0, output: 0 } },
          { text: "ok", usage: { input: 0, output: 0 } },
        ],
      },
    });
    await h.ask(a, "go");
    const spend = await h.store.spend.on(a.id, new Date().toISOString().slice(0, 10));
    expect(spend.tools_micros).toBe(2 * 1_234_567_923);
    const done = h.events.filter((e) => e.type === "dev.wardrik.call.completed");
    expect(done.map((e) => e.data.cost_usd)).toEqual([1234.567923, 1234.567923]);
  });

  it("a per-turn cap ends the turn once tool costs reach it", async () => {
    const t = new FnToolset("paid").add(
      "lookup",
      (_a, ctx) => {
        ctx.cost(0.5);
        return { ok: true, output: "found" };
      },
      { readOnly: true },
    );
    h = await createHarness({
      toolsets: [t],
      policy: { name: "p", rules: [{ tool: "*", decision: "allow" }], budget: { per_turn_usd: 0.75 } },
    });
    const a = await h.agent({ name: "a", script: { steps: [{ tool_calls: [call("paid/lookup")], usage: { input: 0, output: 0 } }] } });
    const end = await h.ask(a, "go");
    expect(end.type).toBe("dev.wardrik.turn.failed");
    expect(String(end.data.reason)).toMatch(/turn's budget of \$0.75/);
    expect(h.events.filter((e) => e.type === "dev.wardrik.call.completed")).toHaveLength(2);
  });
});
