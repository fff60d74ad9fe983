/**
 * Judge rules against the real daemon and CLI: the policy file names a judge
 * model (here a scripted model with a price), whose verdict decides the call
 * and is on the record with its cost; a judge model that does not exist makes
 * the agents of that policy unreadable, naming the rule's line.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, short, type TestProject } from "../helpers/spawn-daemon.js";

let p: TestProject;

const MAILER = `steps:
  - tool_calls:
      - tool: files/write
        args: { path: "mail/{{message}}.md", content: "Your order shipped." }
  - text: "result: {{result}}"
`;
// The judge reads the call and its conversation as JSON in its user message; scenarios match on what it holds
// (each ask below has its own conversation, so earlier calls are not in it).
const JUDGE = `scenarios:
  - match: 'mail/ann\\.md'
    steps: [{ text: '{"decision": "allow", "reason": "Ann asked about her own order."}' }]
  - match: 'mail/bob\\.md'
    steps: [{ text: '{"decision": "deny", "reason": "Bob is not the customer of this order."}' }]
  - match: 'mail/cy\\.md'
    steps: [{ text: '{"decision": "ask", "reason": "Cannot tell whose order this is."}' }]
steps:
  - text: "I think this is probably fine."
`;
const POLICY = `rules:
  - tool: files/write
    decision: judge
    judge:
      model: judge_priced
      prompt: Allow only emails about the customer's own order.
`;
const BROKEN = `rules:
  - tool: files/*
    decision: judge
    judge: { model: no_such_model, prompt: Be careful. }
`;

beforeAll(async () => {
  p = await createProject({
    scripts: { mailer: MAILER, judge: JUDGE },
    models: { judge_priced: { provider: "script", model: "judge", price: { input: 1, output: 2 } } },
    files: {
      "policies/judged.yaml": POLICY,
      "policies/broken.yaml": BROKEN,
      "agents/mailer.md": agentFile({
        description: "Emails customers about their orders",
        model: "mailer",
        tools: ["files"],
        policy: "judged",
      }),
      "agents/lost.md": agentFile({
        description: "Has a policy whose judge does not exist",
        model: "mailer",
        tools: ["files"],
        policy: "broken",
      }),
    },
  });
});

describe("judges in a running daemon", () => {
  it("allow: the call runs, and call.judged records the verdict, model, tokens and cost", async () => {
    const r = await p.cli(["ask", "mailer", "ann"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('result: {"path":"mail/ann.md","bytes":19}');
    const judged = await p.waitForEvent("mailer", (e) => short(e.type) === "call.judged");
    expect(judged.data).toMatchObject({
      tool: "files/write",
      verdict: "allow",
      reason: "Ann asked about her own order.",
      model: "judge_priced",
      rule: "policies/judged.yaml:2",
      input_tokens: expect.any(Number),
      output_tokens: expect.any(Number),
    });
    expect(Number(judged.data.cost_usd)).toBeGreaterThan(0);
    const events = await p.cli(["events", "mailer"]);
    expect(events.stdout).toMatch(
      /call\.judged\s+run_\S+ call_\S+ files\/write allow by judge_priced \$0\.\d{6}: Ann asked about her own order\./,
    );
  });

  it("deny: the model is told the judge's reason", async () => {
    const r = await p.cli(["ask", "mailer", "bob", "--conversation", "bob"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("result: Denied by policy: Bob is not the customer of this order.");
  });

  it("ask: the call waits for a person, who approves it through the CLI", async () => {
    const ask = p.spawnCli(["ask", "mailer", "cy", "--conversation", "cy"]);
    await ask.waitForOutput((_out, err) => /wardrik approve mailer call_/.test(err));
    expect(ask.stderr()).toContain("files/write waits for approval: Cannot tell whose order this is.");
    const call = /wardrik approve mailer (call_[0-9A-Z]{26})/.exec(ask.stderr())![1]!;
    expect((await p.cli(["approve", "mailer", call])).code).toBe(0);
    const done = await ask.done;
    expect(done.code).toBe(0);
    expect(done.stdout).toContain('result: {"path":"mail/cy.md","bytes":19}');
  });

  it("an answer that is not a verdict leaves the call to a person (on_error: ask by default)", async () => {
    const ask = p.spawnCli(["ask", "mailer", "dee", "--conversation", "dee"]);
    await ask.waitForOutput((_out, err) => /wardrik approve mailer call_/.test(err));
    expect(ask.stderr()).toMatch(
      /The judge \(judge_priced\) gave no usable verdict, so this call is left to a person: the answer is not JSON/,
    );
    await ask.stop();
  });

  it("a judge model that does not exist makes the policy's agents unreadable, naming the rule", async () => {
    const show = await p.cli(["agent", "show", "lost"]);
    expect(show.stdout).toContain("unreadable");
    expect(show.stdout).toMatch(/policies\/broken\.yaml:2: judge\.model "no_such_model": /);
  });
});
