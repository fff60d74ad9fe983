/**
 * Judge rules (`decision: judge`) in the turn loop, with the scripted model
 * playing both the agent's model and the judge.
 */
import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import type { ScriptStep } from "@wardrik/testing";
import { afterEach, describe, expect, it } from "vitest";
import type { Policy } from "../../src/policy/types.js";
import { createHarness, FnToolset, types, type Harness } from "../helpers/runtime-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const JUDGE_PROMPT = "Allow only emails about the customer's own order.";

function mail(log: string[]) {
  const t = new FnToolset("shop").add("email_customer", (args) => {
    log.push(`email ${JSON.stringify(args)}`);
    return { ok: true, output: "sent" };
  });
  t.tools.get("email_customer")!.info.description = "Send an email to a customer.";
  return t;
}

function policy(onError: "ask" | "deny" = "ask", budget?: Policy["budget"]): Policy {
  return {
    name: "judged",
    ...(budget ? { budget } : {}),
    rules: [
      {
        tool: "shop/email_customer",
        decision: "judge",
        judge: { model: "judge", prompt: JUDGE_PROMPT, on_error: onError },
        source: "policies/judged.yaml:3",
      },
    ],
  };
}

const ASK_TO_EMAIL: ScriptStep = {
  tool_calls: [{ tool: "shop/email_customer", args: { to: "ann@example.com", body: "Your order ord_1 shipped." } }],
};

async function setup(judge: ScriptStep, onError: "ask" | "deny" = "ask", budget?: Policy["budget"]) {
  const log: string[] = [];
  h = await createHarness({ toolsets: [mail(log)], policy: policy(onError, budget) });
  h.script("judge", { steps: [judge] });
  const agent = await h.agent({
    name: "support",
    description: "Answers customers about their orders.",
    script: { steps: [ASK_TO_EMAIL, { text: "done: {{result}}" }] },
  });
  return { log, agent };
}

const judgeCalls = (): LanguageModelV3CallOptions[] => h!.models.get("judge")?.calls ?? [];
const promptText = (c: LanguageModelV3CallOptions) => JSON.stringify(c.prompt);

describe("judge rules", () => {
  it("allow: the judge sees the call and its context, its verdict and cost are on the record, and the call runs", async () => {
    const { log, agent } = await setup({
      text: '{"decision": "allow", "reason": "It is about her own order."}',
      usage: { input: 400, output: 20 },
    });
    const end = await h!.ask(agent, "Tell Ann her order ord_1 shipped.");
    expect(end.type).toBe("dev.wardrik.turn.completed");
    expect(log).toEqual(['email {"to":"ann@example.com","body":"Your order ord_1 shipped."}']);

    const run = end.run!;
    const t = types(h!.events, run);
    expect(t.indexOf("round.saved")).toBeLessThan(t.indexOf("call.judged"));
    expect(t.indexOf("call.judged")).toBeLessThan(t.indexOf("call.decided"));
    const judged = h!.events.find((e) => e.type === "dev.wardrik.call.judged")!;
    expect(judged.data).toMatchObject({
      tool: "shop/email_customer",
      verdict: "allow",
      reason: "It is about her own order.",
      model: "script/judge",
      rule: "policies/judged.yaml:3",
      input_tokens: 400,
      output_tokens: 20,
      cost_usd: (400 * 1 + 20 * 2) / 1_000_000,
    });
    expect(judged.data.error).toBeUndefined();
    const decided = h!.events.find((e) => e.type === "dev.wardrik.call.decided")!;
    expect(decided.data).toMatchObject({ decision: "allow", reason: "It is about her own order.", rule: "policies/judged.yaml:3" });

    // What the judge was sent: structured output, its prompt from the policy, and the call with its context.
    const [sent] = judgeCalls();
    expect(sent!.responseFormat).toMatchObject({ type: "json", schema: { required: ["decision", "reason"] } });
    const system = sent!.prompt[0]!;
    expect(system.role).toBe("system");
    expect(system.content).toContain(JUDGE_PROMPT);
    // What the agent's side wrote is data in the user message, never part of the judge's instructions.
    expect(system.content).not.toContain("Tell Ann");
    expect(system.content).not.toContain("ann@example.com");
    const data = promptText(sent!);
    for (const fact of [
      "shop/email_customer",
      "Send an email to a customer.",
      "ann@example.com",
      "Answers customers about their orders.",
      "Tell Ann her order ord_1 shipped.",
    ])
      expect(data).toContain(fact);
    // ...but not the agent's instructions, and the agent's model never sees the judge's prompt.
    expect(data).not.toContain("You are a test agent.");
    for (const c of h!.models.get("support")!.calls) expect(JSON.stringify(c.prompt)).not.toContain(JUDGE_PROMPT);

    // The judge's cost is part of the turn's spend.
    const replies = h!.events.filter((e) => e.run === run && e.type === "dev.wardrik.model.replied");
    const modelUsd = replies.reduce((n, e) => n + Number(e.data.cost_usd), 0);
    expect(end.data.spend_usd).toBeCloseTo(modelUsd + Number(judged.data.cost_usd), 9);
  });

  it("deny: the call never runs and the model is told the judge's reason, as with a rule", async () => {
    const { log, agent } = await setup({ text: '{"decision": "deny", "reason": "The email is about another customer\'s order."}' });
    const end = await h!.ask(agent, "Email Bob about Ann's order.");
    expect(log).toEqual([]);
    expect(end.data.reply).toBe("done: Denied by policy: The email is about another customer's order.");
    const decided = h!.events.find((e) => e.type === "dev.wardrik.call.decided")!;
    expect(decided.data).toMatchObject({ decision: "deny", reason: "The email is about another customer's order." });
  });

  it("ask: the call waits for a person with the judge's reason, and runs once approved", async () => {
    const { log, agent } = await setup({ text: '{"decision": "ask", "reason": "Not sure whose order this is."}' });
    await h!.runtime.enqueue(agent, "main", "Email someone.");
    const asked = await h!.waitFor((e) => e.type === "dev.wardrik.approval.requested");
    expect(asked.data).toMatchObject({ tool: "shop/email_customer", reason: "Not sure whose order this is." });
    await h!.waitFor((e) => e.type === "dev.wardrik.turn.parked");
    expect(log).toEqual([]);
    await h!.runtime.approve(agent, String(asked.data.call));
    const end = await h!.waitFor((e) => e.type === "dev.wardrik.turn.completed");
    expect(end.data.reply).toBe("done: sent");
    expect(log).toHaveLength(1);
  });

  it("a malformed answer gives on_error ask: a person decides, and the problem is on the record", async () => {
    const { log, agent } = await setup({ text: "Sure, that looks fine to me!" }, "ask");
    await h!.runtime.enqueue(agent, "main", "Email Ann.");
    const asked = await h!.waitFor((e) => e.type === "dev.wardrik.approval.requested");
    expect(asked.data.reason).toMatch(
      /^The judge \(judge\) gave no usable verdict, so this call is left to a person: the answer is not JSON/,
    );
    const judged = h!.events.find((e) => e.type === "dev.wardrik.call.judged")!;
    expect(judged.data).toMatchObject({ verdict: "ask", error: expect.stringMatching(/not JSON/) });
    expect(log).toEqual([]);
  });

  it("an answer of the wrong shape with on_error deny: the call is refused and the model told why", async () => {
    const { log, agent } = await setup({ text: '{"decision": "maybe", "reason": "hmm"}' }, "deny");
    const end = await h!.ask(agent, "Email Ann.");
    expect(log).toEqual([]);
    expect(end.data.reply).toMatch(
      /^done: Denied by policy: The judge \(judge\) gave no usable verdict, so this call is refused: decision /,
    );
    const judged = h!.events.find((e) => e.type === "dev.wardrik.call.judged")!;
    expect(judged.data).toMatchObject({ verdict: "deny", error: expect.stringMatching(/^decision /) });
  });

  it("a judge model that fails gives on_error", async () => {
    const { log, agent } = await setup({ error: { status: 400, message: "bad request from the judge's provider" } }, "deny");
    const end = await h!.ask(agent, "Email Ann.");
    expect(log).toEqual([]);
    expect(end.data.reply).toContain("the judge's model failed: bad request from the judge's provider");
  });

  it("judges of one round run in parallel, and each verdict reaches its own call", async () => {
    const log: string[] = [];
    h = await createHarness({ toolsets: [mail(log)], policy: policy() });
    // Each judge answers only once all three have been asked: judges run one after another would never get there.
    let arrived = 0;
    let allThere: () => void = () => undefined;
    const barrier = new Promise<void>((resolve) => (allThere = resolve));
    h.script("judge", async (ctx) => {
      if (++arrived === 3) allThere();
      const together = await Promise.race([barrier.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5000))]);
      if (!together) return { text: "only one judge at a time" };
      return JSON.stringify(ctx.prompt).includes("bob@")
        ? { text: '{"decision": "deny", "reason": "Bob is not the customer."}' }
        : { text: '{"decision": "allow", "reason": "fine"}' };
    });
    const agent = await h.agent({
      name: "support",
      script: {
        steps: [
          {
            tool_calls: [
              { tool: "shop/email_customer", args: { to: "ann@example.com" } },
              { tool: "shop/email_customer", args: { to: "bob@example.com" } },
              { tool: "shop/email_customer", args: { to: "cy@example.com" } },
            ],
          },
          { text: "ok" },
        ],
      },
    });
    const end = await h.ask(agent, "Email them.");
    expect(end.type).toBe("dev.wardrik.turn.completed");
    expect(log.sort()).toEqual(['email {"to":"ann@example.com"}', 'email {"to":"cy@example.com"}']);
    const decided = h.events.filter((e) => e.type === "dev.wardrik.call.decided").map((e) => e.data.decision);
    expect(decided).toEqual(["allow", "deny", "allow"]);
    expect(judgeCalls()).toHaveLength(3);
  });

  it("a judge's cost that passes the turn's budget refuses the calls and ends the turn", async () => {
    // The judge reads 200,000 tokens at $1 per million: $0.20, past the $0.10 a turn may spend.
    const { log, agent } = await setup({ text: '{"decision": "allow", "reason": "fine"}', usage: { input: 200_000, output: 10 } }, "ask", {
      per_turn_usd: 0.1,
    });
    const end = await h!.ask(agent, "Email Ann.");
    expect(end.type).toBe("dev.wardrik.turn.failed");
    expect(end.data).toMatchObject({ code: "budget", reason: expect.stringMatching(/turn's budget of \$0.1 would be passed/) });
    expect(log).toEqual([]);
    const run = end.run!;
    expect(types(h!.events, run)).toEqual(expect.arrayContaining(["call.judged", "budget.exceeded"]));
    const decided = h!.events.find((e) => e.type === "dev.wardrik.call.decided")!;
    expect(decided.data).toMatchObject({ decision: "deny" });
    // The judge was paid for: its cost is in the turn's spend, and so in the day's.
    expect(Number(end.data.spend_usd)).toBeGreaterThan(0.2);
  });

  it("no judge runs once the reply alone has passed the budget", async () => {
    h = await createHarness({ toolsets: [mail([])], policy: policy("ask", { per_turn_usd: 0.1 }) });
    h.script("judge", { steps: [{ text: '{"decision": "allow", "reason": "fine"}' }] });
    // 100,000 output tokens at $2 per million: the reply alone costs $0.20.
    const agent = await h.agent({ name: "support", script: { steps: [{ ...ASK_TO_EMAIL, usage: { output: 100_000 } }, { text: "ok" }] } });
    const end = await h.ask(agent, "Email Ann.");
    expect(end.data).toMatchObject({ code: "budget" });
    expect(judgeCalls()).toHaveLength(0);
    expect(types(h.events, end.run)).not.toContain("call.judged");
  });
});
