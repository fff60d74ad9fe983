/**
 * The record as a time machine, end to end: the real daemon, the real CLI,
 * and a real worker process (the SDK) that writes a line to a ledger file on
 * every execution. `wardrik fork` copies a conversation as it stood at an
 * event; `wardrik replay` runs recorded turns again with another scripted
 * model, serving tool results from the record: the ledger shows the worker
 * ran nothing, and the agent's record gained nothing, unless --live named
 * the tool.
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import type { ForkResult, ReplayReport } from "@wardrik/protocol";
import { startFixtureWorker } from "../helpers/fixture-worker.js";
import { agentFile, createProject, short, waitFor, type TestProject } from "../helpers/spawn-daemon.js";

// The agent's own model: look the order up, refund 40, say so.
const SHOP = `scenarios:
  - match: refund
    steps:
      - tool_calls: [{ tool: workers/find_order, args: { order_id: ord_1 } }]
      - tool_calls: [{ tool: workers/refund_order, args: { order_id: ord_1, amount: 40 } }]
      - text: "Refunded: {{result}}"
steps:
  - text: "ECHO: {{message}}"
`;
// Another model: the same lookup (in the record), then a refund of 50 (not in it).
const CAREFUL = `scenarios:
  - match: refund
    steps:
      - tool_calls: [{ tool: workers/find_order, args: { order_id: ord_1 } }]
      - tool_calls: [{ tool: workers/refund_order, args: { order_id: ord_1, amount: 50 } }]
      - text: "Careful: {{result}}"
steps:
  - text: "CAREFUL: {{message}}"
`;

// An eval's judge: it fails the criterion that asks for rudeness, answers a "garbled" one with no JSON, passes the rest.
const JUDGE = `scenarios:
  - match: rude
    steps:
      - text: '{"pass": false, "reason": "The reply is plain, not rude."}'
  - match: garbled
    steps:
      - text: "Looks fine to me."
steps:
  - text: '{"pass": true, "reason": "The reply repeats the message."}'
`;

let p: TestProject;
let ledger: string;

function runs(): { tool: string; args: Record<string, unknown> }[] {
  if (!existsSync(ledger)) return [];
  return readFileSync(ledger, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { tool: string; args: Record<string, unknown> });
}

async function served(): Promise<boolean> {
  const id = await p.agentId("shop");
  const tools = await p.apiOk<{ tools: { name: string }[] }>("GET", `/v1/agents/${id}/tools`);
  return tools.tools.some((t) => t.name === "workers/refund_order");
}

beforeAll(async () => {
  ledger = join(mkdtempSync(join(tmpdir(), "wardrik-ledger-")), "runs.jsonl");
  p = await createProject({
    scripts: { shop: SHOP, careful: CAREFUL, judge: JUDGE },
    // USD per million tokens: the shop script at a price, so a budget has something to count.
    models: { priced: { provider: "script", model: "shop", price: { input: 1000, output: 2000 } } },
    files: {
      "policies/open.yaml": 'description: Everything runs.\nrules:\n  - tool: "*"\n    decision: allow\n',
      "policies/tight.yaml":
        'description: A millionth of a dollar a turn.\nbudget: { per_turn_usd: 0.000001 }\nrules:\n  - tool: "*"\n    decision: allow\n',
      "agents/shop.md": agentFile({ description: "Refunds orders", model: "shop", tools: ["workers/*"], policy: "open" }),
    },
  });
  const { output } = startFixtureWorker(p, fileURLToPath(new URL("./fixtures/ledger-worker.ts", import.meta.url)), { LEDGER: ledger });
  await waitFor(() => served(), `the worker to register; its output: ${output()}`, 30_000);
  expect(short((await p.send("shop", "hello")).end.type)).toBe("turn.completed");
  const refund = await p.send("shop", "refund ord_1");
  expect(refund.end.data.reply).toBe('Refunded: {"refunded":40}');
  expect(runs().map((r) => r.tool)).toEqual(["find_order", "refund_order"]);
});

describe("wardrik fork", () => {
  it("copies main as it stood after the first turn; the original keeps its history", async () => {
    const events = await p.events("shop");
    const firstEnd = events.find((e) => short(e.type) === "turn.completed")!;
    const res = await p.cli(["fork", "shop", "--conversation", "main", "--at", String(firstEnd.seq), "--as", "first", "--json"]);
    expect(res.code, res.stderr).toBe(0);
    const f = JSON.parse(res.stdout) as ForkResult;
    expect(f).toMatchObject({ conversation: "first", from: "main", at_seq: firstEnd.seq, messages: 2, turns: 1 });
    const id = await p.agentId("shop");
    const copy = await p.apiOk<{ messages: { role: string }[] }>("GET", `/v1/agents/${id}/conversations/first/messages`);
    expect(copy.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    const main = await p.apiOk<{ messages: unknown[] }>("GET", `/v1/agents/${id}/conversations/main/messages`);
    expect(main.messages).toHaveLength(8);
    const forked = (await p.events("shop")).filter((e) => short(e.type) === "conversation.forked");
    expect(forked.at(-1)!.data).toMatchObject({ conversation: "first", from: "main", at_seq: firstEnd.seq });

    // The same through HTTP, in the OpenAPI document, and the text form.
    const doc = await p.apiOk<{ paths: Record<string, unknown> }>("GET", "/v1/openapi.json");
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/v1/agents/{id}/conversations/{key}/fork", "/v1/agents/{id}/replays"]));
    const again = await p.api("POST", `/v1/agents/${id}/conversations/main/fork`, { at: firstEnd.seq, as: "first" });
    expect(again.status).toBe(409);
    const text = await p.cli(["fork", "shop", "--at", String(firstEnd.seq)]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`Forked main at event ${firstEnd.seq} as main@${firstEnd.seq}: 2 message(s) from 1 turn(s).`);
  });
});

describe("wardrik replay", () => {
  it("with another model diverges at the refund, answers it 'not in the record', and runs no tool", async () => {
    const before = runs().length;
    const id = await p.agentId("shop");
    const lastSeq = (await p.events("shop")).at(-1)!.seq;
    const res = await p.cli(["replay", "shop", "--conversation", "main", "--model", "careful", "--json"]);
    expect(res.code, res.stderr).toBe(0);
    const r = JSON.parse(res.stdout) as ReplayReport;
    expect(r).toMatchObject({ agent: "shop", conversation: "main", model: "careful", policy: "open", live: [] });
    expect(r.turns.map((t) => [t.turn, t.diverged])).toEqual([
      [1, false],
      [2, true],
    ]);
    const [hello, refund] = r.turns;
    expect(hello!.original!.reply).toBe("ECHO: hello");
    expect(hello!.replay.reply).toBe("CAREFUL: hello");
    expect(refund!.original!.calls.map((c) => [c.tool, c.args])).toEqual([
      ["workers/find_order", { order_id: "ord_1" }],
      ["workers/refund_order", { order_id: "ord_1", amount: 40 }],
    ]);
    expect(refund!.replay.calls.map((c) => [c.tool, c.args, c.source, c.matched])).toEqual([
      ["workers/find_order", { order_id: "ord_1" }, "record", true],
      ["workers/refund_order", { order_id: "ord_1", amount: 50 }, "missing", false],
    ]);
    expect(refund!.replay.calls[0]!.output).toEqual({ id: "ord_1", total: 40 });
    expect(refund!.replay.calls[1]!.error).toMatch(/^Not in the record: workers\/refund_order was not called with these arguments/);
    expect(refund!.replay.reply).toMatch(/^Careful: Not in the record/);

    // The worker ran nothing; the agent's record and history gained nothing.
    expect(runs().length).toBe(before);
    expect((await p.events("shop")).at(-1)!.seq).toBe(lastSeq);
    const main = await p.apiOk<{ messages: unknown[] }>("GET", `/v1/agents/${id}/conversations/main/messages`);
    expect(main.messages).toHaveLength(8);
  });

  it("prints the original and the replay side by side", async () => {
    const res = await p.cli(["replay", "shop", "--turns", "2", "--model", "careful"]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain("Replay of shop, conversation main: model careful, policy open, live: none.");
    expect(res.stdout).toContain("No tool ran: every result came from the record.");
    expect(res.stdout).toMatch(/Turn 2 \(run_\w+\): DIVERGED/);
    // Each call on its line, side by side, and under it what became of it.
    expect(res.stdout).toMatch(
      /calls\s+workers\/find_order \{"order_id":"ord_1"\}\s+workers\/find_order \{"order_id":"ord_1"\}\n\s+-> completed\s+\[from the record\]/,
    );
    expect(res.stdout).toContain("[not in the record: did not run]");
    // The replies, costs and model calls, original then replay, on one line each.
    expect(res.stdout).toMatch(/\n {2}reply\s+Refunded: \{"refunded":40\}\s+Careful: Not in the record/);
    expect(res.stdout).toMatch(/\n {2}cost\s+\$0\.000000\s+\$0\.000000\n/);
    expect(res.stdout).toMatch(/\n {2}model calls\s+3\s+3\n/);
    expect(res.stdout).not.toMatch(/Turn 1/);
  });

  it("with the agent's own model matches the record call for call", async () => {
    const before = runs().length;
    const res = await p.cli(["replay", "shop", "--json"]);
    expect(res.code, res.stderr).toBe(0);
    const r = JSON.parse(res.stdout) as ReplayReport;
    expect(r.turns.map((t) => t.diverged)).toEqual([false, false]);
    expect(r.turns[1]!.replay.reply).toBe('Refunded: {"refunded":40}');
    expect(r.turns[1]!.replay.calls.every((c) => c.source === "record")).toBe(true);
    expect(runs().length).toBe(before);
  });

  it("runs a tool for real only when --live names it", async () => {
    const before = runs().length;
    const res = await p.cli(["replay", "shop", "--turns", "2..2", "--model", "careful", "--live", "workers/refund_order", "--json"]);
    expect(res.code, res.stderr).toBe(0);
    const r = JSON.parse(res.stdout) as ReplayReport;
    expect(r.turns[0]!.replay.calls.map((c) => [c.tool, c.source])).toEqual([
      ["workers/find_order", "record"],
      ["workers/refund_order", "live"],
    ]);
    expect(r.turns[0]!.replay.reply).toBe('Careful: {"refunded":50}');
    // The lookup still came from the record; only the named tool ran.
    expect(runs().slice(before)).toEqual([{ tool: "refund_order", args: { order_id: "ord_1", amount: 50 } }]);
  });

  it("--agent-file runs that file instead of the loaded agent: its model, and its daily budget stops the turn", async () => {
    const before = runs().length;
    const lastSeq = (await p.events("shop")).at(-1)!.seq;
    p.write("drafts/shop.md", agentFile({ description: "Refunds orders", model: "careful", tools: ["workers/*"], policy: "open" }));
    const res = await p.cli(["replay", "shop", "--turns", "1", "--agent-file", "drafts/shop.md", "--json"]);
    expect(res.code, res.stderr).toBe(0);
    const r = JSON.parse(res.stdout) as ReplayReport;
    expect(r).toMatchObject({ model: "careful", policy: "open" });
    expect(r.turns[0]!.replay.reply).toBe("CAREFUL: hello");

    // The file's own daily budget applies: the priced model's first call would pass it, so the turn stops before it.
    const frugal = { description: "Refunds orders", model: "priced", tools: ["workers/*"], policy: "open", budget: 0.000001 };
    p.write("drafts/frugal.md", agentFile(frugal));
    const capped = await p.cli(["replay", "shop", "--turns", "2", "--agent-file", "drafts/frugal.md", "--json"]);
    expect(capped.code, capped.stderr).toBe(0);
    const c = (JSON.parse(capped.stdout) as ReplayReport).turns[0]!.replay;
    expect(c).toMatchObject({ status: "failed", iterations: 0, calls: [] });
    expect(c.reason).toMatch(/daily budget of \$0\.000001 would be passed/);
    expect(runs().length).toBe(before);
    expect((await p.events("shop")).at(-1)!.seq).toBe(lastSeq);
  });

  it("--policy decides the replay's calls (a file that denies or asks, a name in policies/ whose budget caps the turn)", async () => {
    const before = runs().length;
    const lastSeq = (await p.events("shop")).at(-1)!.seq;
    const rules = (refund: string) =>
      `description: Refunds ${refund}.\nrules:\n  - tool: workers/refund_order\n    decision: ${refund}\n  - tool: "*"\n    decision: allow\n`;
    p.write("drafts/no-refund.yaml", rules("deny"));
    const denied = await p.cli(["replay", "shop", "--turns", "2", "--policy", "drafts/no-refund.yaml", "--json"]);
    expect(denied.code, denied.stderr).toBe(0);
    const d = JSON.parse(denied.stdout) as ReplayReport;
    expect(d.policy).toBe("drafts/no-refund.yaml");
    expect(d.turns[0]!.replay.calls.map((c) => [c.tool, c.decision, c.source])).toEqual([
      ["workers/find_order", "allow", "record"],
      ["workers/refund_order", "deny", "none"],
    ]);
    // The same tool with the same arguments, refused where the original ran it: the turn diverged.
    expect(d.turns[0]!.original!.calls.map((c) => [c.tool, c.status])).toEqual([
      ["workers/find_order", "completed"],
      ["workers/refund_order", "completed"],
    ]);
    expect(d.turns[0]!.diverged).toBe(true);

    // A call the policy sends to a person, which nobody decided in the record: the replay stops there.
    p.write("drafts/ask-refund.yaml", rules("ask"));
    const asked = await p.cli(["replay", "shop", "--turns", "2", "--policy", "drafts/ask-refund.yaml", "--json"]);
    expect(asked.code, asked.stderr).toBe(0);
    const a = (JSON.parse(asked.stdout) as ReplayReport).turns[0]!.replay;
    expect(a.status).toBe("would_ask");
    expect(a.reason).toContain("Stopped where a person would be asked: workers/refund_order");

    // The named policy's per-turn budget: the priced model's first call would pass it.
    const tight = await p.cli(["replay", "shop", "--turns", "2", "--policy", "tight", "--model", "priced", "--json"]);
    expect(tight.code, tight.stderr).toBe(0);
    const t = JSON.parse(tight.stdout) as ReplayReport;
    expect(t.policy).toBe("tight");
    expect(t.turns[0]!.replay).toMatchObject({ status: "failed", iterations: 0, calls: [] });
    expect(t.turns[0]!.replay.reason).toMatch(/turn's budget of \$0\.000001 would be passed/);
    // The same replay under the agent's own policy runs: the cap came from --policy.
    const open = await p.cli(["replay", "shop", "--turns", "2", "--model", "priced", "--json"]);
    const priced = JSON.parse(open.stdout) as ReplayReport;
    expect(priced.turns[0]!.replay.status).toBe("completed");
    expect(priced.cost_usd).toBeGreaterThan(0);
    // What the replay's model calls cost is not the agent's spend (its own model is free).
    const agent = await p.apiOk<{ spend: { today_usd: number } }>("GET", `/v1/agents/${await p.agentId("shop")}`);
    expect(agent.spend.today_usd).toBe(0);

    expect(runs().length).toBe(before);
    expect((await p.events("shop")).at(-1)!.seq).toBe(lastSeq);
  });

  it("says what is wrong with a bad range or model, and exits 1", async () => {
    const range = await p.cli(["replay", "shop", "--turns", "5"]);
    expect(range.code).toBe(1);
    expect(range.stderr).toContain("Conversation main has turns 1 to 2");
    const usage = await p.cli(["replay", "shop", "--turns", "2..1"]);
    expect(usage.code).toBe(2);
    const model = await p.cli(["replay", "shop", "--model", "nosuch/model"]);
    expect(model.code).toBe(1);
    expect(model.stderr).toContain('Model "nosuch/model" cannot be used');
  });
});

describe("wardrik eval", () => {
  it("runs a suite of new messages and recorded turns: passes and failures, a table, JSON, JUnit, exit 1, no tool run", async () => {
    p.write(
      "evals/shop.yaml",
      `agent: shop
cases:
  - name: echoes
    message: "ping"
    expect: { reply: "ECHO: ping" }
  - name: refund as recorded
    from: { conversation: main, turn: 2 }
    expect:
      calls: [{ tool: workers/refund_order, args: { amount: 40 } }]
      max_cost_usd: 0.01
  - name: scripted refund
    message: "refund ord_1"
    tools:
      workers/find_order: { id: ord_1 }
      workers/refund_order: { refunded: 7 }
    expect: { reply: "/Refunded: .*7/" }
  - name: wrong amount
    from: { conversation: main, turn: 2 }
    expect:
      calls: [{ tool: workers/refund_order, args: { amount: 50 } }]
      not_called: [workers/find_order]
`,
    );
    const before = runs().length;
    const table = await p.cli(["eval", "evals/shop.yaml", "--junit", "eval.xml"]);
    expect(table.code, table.stderr).toBe(1);
    expect(table.stdout).toMatch(/^echoes\s+.*pass/m);
    expect(table.stdout).toMatch(/^refund as recorded\s+.*pass/m);
    expect(table.stdout).toMatch(/^scripted refund\s+.*pass/m);
    expect(table.stdout).toMatch(/^wrong amount\s+.*FAIL/m);
    expect(table.stdout).toContain("3 of 4 case(s) passed, 1 failed");
    const xml = p.read("eval.xml");
    expect(xml).toContain('tests="4"');
    expect(xml).toContain('failures="1"');
    expect(xml).toMatch(/<testcase [^>]*name="wrong amount"[^>]*>\s*<failure/);

    const asJson = await p.cli(["eval", "evals/shop.yaml", "--json"]);
    expect(asJson.code).toBe(1);
    const r = JSON.parse(asJson.stdout) as { passed: number; failed: number; cases: { name: string; pass: boolean; failures: string[] }[] };
    expect([r.passed, r.failed]).toEqual([3, 1]);
    const wrong = r.cases.find((c) => c.name === "wrong amount")!;
    expect(wrong.failures.join("\n")).toMatch(/refund_order/);
    expect(wrong.failures.join("\n")).toMatch(/find_order/);
    // Every tool answered from the record or the case's script: the worker ran nothing.
    expect(runs().slice(before)).toEqual([]);
  });

  it("asks the judge model about each criterion: a verdict that passes, one that fails with its reason, an answer that is not a verdict", async () => {
    p.write(
      "evals/judged.yaml",
      `agent: shop
judge_model: judge
cases:
  - name: judged echo
    message: "ping"
    expect: { judge: "The reply repeats the message." }
  - name: judged rude
    message: "ping"
    expect: { reply: "ECHO", judge: ["The reply repeats the message.", "The reply is rude."] }
  - name: judged recorded refund
    from: { conversation: main, turn: 2 }
    expect: { judge: "garbled: the reply names the amount." }
`,
    );
    const res = await p.cli(["eval", "evals/judged.yaml", "--json"]);
    expect(res.code, res.stderr).toBe(1);
    const r = JSON.parse(res.stdout) as {
      passed: number;
      failed: number;
      cases: { name: string; pass: boolean; failures: string[]; report: ReplayReport }[];
    };
    const byName = new Map(r.cases.map((c) => [c.name, c]));
    expect([r.passed, r.failed]).toEqual([1, 2]);
    expect(byName.get("judged echo")!.report.judged).toEqual([
      { criterion: "The reply repeats the message.", pass: true, reason: "The reply repeats the message.", model: "judge", cost_usd: 0 },
    ]);
    // The reply check passed; of two criteria, the one the judge failed is the case's one failure, with the judge's reason.
    expect(byName.get("judged rude")!.failures).toEqual(['judge: "The reply is rude." is not met: The reply is plain, not rude.']);
    expect(byName.get("judged recorded refund")!.failures).toEqual([
      'judge: "garbled: the reply names the amount." is not met: The judge\'s answer is not {"pass": ..., "reason": ...}: "Looks fine to me."',
    ]);
  });

  it("runs agents/NAME.md as it is on disk (not reloaded), and checks argument patterns, cost and iteration caps", async () => {
    const loaded = p.read("agents/shop.md");
    const edited = loaded.replace(/^model: .*$/m, "model: careful");
    expect(edited).not.toBe(loaded);
    p.write("agents/shop.md", edited);
    try {
      p.write(
        "evals/caps.yaml",
        `agent: shop
cases:
  - name: edited file
    message: "ping"
    expect: { reply: "CAREFUL: ping" }
  - name: over the caps
    message: "refund ord_1"
    model: priced
    tools: { workers/find_order: { id: ord_1 }, workers/refund_order: { refunded: 7 } }
    expect:
      calls: [{ tool: workers/refund_order, args: { order_id: '/^ord_\\d$/', amount: 40 } }]
      max_cost_usd: 0.000001
      max_iterations: 2
`,
      );
      const res = await p.cli(["eval", "evals/caps.yaml", "--json"]);
      expect(res.code, res.stderr).toBe(1);
      const r = JSON.parse(res.stdout) as { agent_file: string; cases: { name: string; pass: boolean; failures: string[] }[] };
      expect(r.agent_file).toBe("agents/shop.md");
      expect(r.cases.map((c) => [c.name, c.pass])).toEqual([
        ["edited file", true],
        ["over the caps", false],
      ]);
      // The call matched its pattern; the two caps are the failures.
      const failures = r.cases[1]!.failures;
      expect(failures).toHaveLength(2);
      expect(failures[0]).toMatch(/^max_cost_usd: the turn cost \$0\.\d+, over \$0\.000001$/);
      expect(failures[1]).toBe("max_iterations: the turn made 3 model calls, over 2");
    } finally {
      p.write("agents/shop.md", loaded);
    }
  });

  it("points at the line of a mistake in the suite file and exits 2", async () => {
    p.write("evals/bad.yaml", "agent: shop\ncases:\n  - name: nothing to run\n    expect: { reply: x }\n");
    const res = await p.cli(["eval", "evals/bad.yaml"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("evals/bad.yaml");
    expect(res.stderr).toContain("needs one of message (a new turn) or from (a recorded turn)");
  });
});
