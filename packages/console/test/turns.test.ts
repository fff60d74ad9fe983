/**
 * A conversation's turns and one turn's timeline in a real browser
 * (Chromium), against the real daemon with a real SDK worker: the list gives
 * each turn's status, duration, model calls and cost; the timeline gives the
 * model calls and tool calls with their durations and costs and the approval
 * in between; an approval with edited arguments shows the edited ones, marked
 * edited, with who decided, there and in the conversation.
 */
import type { TurnList } from "@wardrik/protocol";
import type { Locator, Page } from "playwright-core";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, short, waitFor, type TestProject, type WireEvent } from "../../daemon/test/helpers/spawn-daemon.js";
import { decidedBy } from "../src/approval-info.js";
import { duration, usd } from "../src/format.js";
import { launchBrowser, screenshots, signIn, type ConsoleBrowser } from "./helpers/browser.js";
import { startWorker } from "./helpers/worker.js";

const POLICY = `rules:
  - tool: workers/refund
    decision: ask
    reason: Refunds need a person.
`;
// Two model calls a turn, each 1000 tokens in and 500 out at $100 and $200 a million: $0.20 each.
const SCRIPT = `steps:
  - tool_calls:
      - tool: workers/refund
        args: { order: "ord_1234", amount_usd: 250 }
    usage: { input: 1000, output: 500 }
  - text: "Refunded: {{result}}"
    usage: { input: 1000, output: 500 }
`;

let p: TestProject;
let browser: ConsoleBrowser;
let page: Page;
let id: string;

beforeAll(async () => {
  [p, browser] = await Promise.all([
    createProject({
      scripts: { refunder: SCRIPT },
      models: { paid: { provider: "script", model: "refunder", price: { input: 100, output: 200 } } },
      files: {
        "policies/refunds.yaml": POLICY,
        "agents/payer.md": agentFile({ description: "Refunds orders", model: "paid", tools: ["workers/*"], policy: "refunds" }),
      },
    }),
    launchBrowser(),
  ]);
  id = await p.agentId("payer");
  await startWorker(p, "refund-worker", id, "workers/refund");
  page = await browser.newPage();
  await signIn(page, p.url, p.token);
});

afterEach(() => {
  expect(browser.errors, "console errors").toEqual([]);
});

/** Queues a message in `conversation` and waits until its refund call waits for approval. */
async function park(text: string, conversation: string): Promise<{ call: string; run: string }> {
  const before = (await p.events(id)).length;
  await p.apiOk("POST", `/v1/agents/${id}/messages`, { text, conversation });
  const asked = await p.waitForEvent(id, (e) => short(e.type) === "approval.requested" && e.seq > before);
  return { call: asked.data.call as string, run: asked.run! };
}

const steps = (timeline: Locator) => timeline.locator(":scope > li");
const textOf = async (l: Locator) => (await l.textContent()) ?? "";

describe("an approval with edited arguments", () => {
  let call: string;
  let run: string;
  let granted: WireEvent;

  beforeAll(async () => {
    ({ call, run } = await park("Refund ord_1234 please", "refunds"));
    await page.goto(`${p.url}/#/agents/${id}`);
    const card = page.getByRole("article").filter({ hasText: call });
    await card.getByRole("button", { name: "Edit" }).click();
    await card.getByLabel("Arguments (JSON)").fill('{"order": "ord_1234", "amount_usd": 25}');
    await card.getByText("The arguments fit the tool's schema.").waitFor();
    await card.getByRole("button", { name: "Approve with edits" }).click();
    await p.waitForTurnEnd(id, run);
    granted = (await p.events(id)).find((e) => short(e.type) === "approval.granted" && e.data.call === call)!;
  });

  it("shows in the conversation with the amount the call ran with, marked edited, the model's amount on unfolding", async () => {
    await page.goto(`${p.url}/#/agents/${id}`);
    await page.getByRole("combobox", { name: "Conversation", exact: true }).selectOption("refunds");
    const log = page.getByRole("log", { name: "History of conversation refunds" });
    await log.getByText('Refunded: {"order":"ord_1234","refunded_usd":25}').waitFor();
    const tool = log.locator("details.tool-call").filter({ hasText: "workers/refund" });
    await tool.getByText("edited", { exact: true }).waitFor();
    const summary = await textOf(tool.locator("summary"));
    expect(summary).toContain('"amount_usd":25');
    expect(summary).not.toContain("250");
    await tool.locator("summary").click();
    expect(await textOf(tool.getByLabel("Arguments of workers/refund", { exact: true }))).toContain('"amount_usd": 25');
    expect(await textOf(tool.getByLabel("Original arguments of workers/refund"))).toContain('"amount_usd": 250');
    // The console signed in with the project's admin token: the daemon records that token's name as who decided.
    expect(decidedBy(granted.data)).toBe("token:admin");
    expect(await textOf(tool)).toContain("edited and approved by token:admin");
    await screenshots(page, "conversation-edited-call");
  });

  it("the turns list gives each turn's status, duration, model calls and cost", async () => {
    const second = await park("And refund ord_5678", "refunds");
    await page.goto(`${p.url}/#/agents/${id}/turns`);
    await page.getByRole("combobox", { name: "Conversation", exact: true }).selectOption("refunds");
    const table = page.getByRole("table", { name: "Turns of refunds" });
    const rows = table.locator("tbody tr");
    await waitFor(async () => (await rows.count()) === 2, "both turns");
    const list = await p.apiOk<TurnList>("GET", `/v1/agents/${id}/conversations/refunds/turns`);
    const [parked, done] = list.turns;
    // Newest first: the one waiting for a person, then the finished one.
    expect(parked!.id).toBe(second.run);
    const parkedRow = await textOf(rows.nth(0));
    expect(parkedRow).toContain("And refund ord_5678");
    expect(parkedRow).toContain("parked");
    const doneRow = rows.nth(1);
    expect(await textOf(doneRow.getByRole("cell").nth(1))).toBe("Refund ord_1234 please");
    expect(await textOf(doneRow.getByRole("cell").nth(2))).toBe("completed");
    expect(await textOf(doneRow.getByRole("cell").nth(3))).toContain(duration(Date.parse(done!.ended_at!) - Date.parse(done!.started_at)));
    expect(await textOf(doneRow.getByRole("cell").nth(3))).toMatch(/waiting for a person/);
    expect(await textOf(doneRow.getByRole("cell").nth(4))).toBe("2");
    // Two model calls at $0.20 and the refund API's $0.01.
    expect(done!.spend_usd).toBeCloseTo(0.41, 6);
    expect(await textOf(doneRow.getByRole("cell").nth(5))).toBe(usd(done!.spend_usd));
    expect(usd(done!.spend_usd)).toBe("$0.41");
    await screenshots(page, "turns");
    // Deciding the parked turn's call updates the list without a reload.
    await p.apiOk("POST", `/v1/agents/${id}/calls/${second.call}/approve`, {});
    await waitFor(async () => (await textOf(rows.nth(0))).includes("completed"), "the second turn to show as completed");
  });

  it("the timeline: model calls and tool calls with durations and costs, the approval between, edited and by whom", async () => {
    await page.goto(`${p.url}/#/agents/${id}/turns`);
    await page.getByRole("combobox", { name: "Conversation", exact: true }).selectOption("refunds");
    await page.getByRole("link", { name: "Refund ord_1234 please" }).click();
    await page.getByRole("heading", { name: "Turn in refunds" }).waitFor();
    expect(page.url()).toBe(`${p.url}/#/agents/${id}/turns/${run}`);
    const timeline = page.getByRole("list", { name: "Timeline" });
    await waitFor(async () => (await steps(timeline).count()) === 5, "the turn's five steps");
    const [model1, approval, tool, model2, end] = await Promise.all([0, 1, 2, 3, 4].map((i) => textOf(steps(timeline).nth(i))));
    const events = (await p.events(id)).filter((e) => e.run === run);
    const at = (type: string, nth = 0) => Date.parse(events.filter((e) => short(e.type) === type)[nth]!.time);

    expect(model1).toContain("Model call 1");
    expect(model1).toContain(duration(at("model.replied") - at("model.called")));
    expect(model1).toContain("1000 tokens in, 500 out · $0.20");
    expect(model1).toContain("Asks for 1 tool call");

    expect(approval).toContain("Approval of workers/refund");
    expect(approval).toContain("approved");
    expect(approval).toContain("edited");
    expect(approval).toContain(`waited ${duration(at("approval.granted") - at("approval.requested"))}`);
    expect(approval).toContain("approved by token:admin");
    const step = steps(timeline).nth(1);
    expect(await textOf(step.getByLabel("Edited arguments of workers/refund"))).toContain('"amount_usd": 25');
    expect(await textOf(step.getByLabel("Original arguments of workers/refund"))).toContain('"amount_usd": 250');

    expect(tool).toContain("workers/refund");
    expect(tool).toContain("completed");
    expect(tool).toContain("edited");
    expect(tool).toContain(duration(at("call.completed") - at("call.started")));
    expect(tool).toContain("$0.01");
    expect(tool).toContain('"amount_usd":25');

    expect(model2).toContain("Model call 2");
    expect(model2).toContain('Refunded: {"order":"ord_1234","refunded_usd":25}');
    expect(end).toContain("Turn completed");
    const facts = await textOf(page.locator(".timeline-panel .facts"));
    expect(facts).toContain("Model calls2");
    expect(facts).toContain("Cost$0.41");
    await page.locator(".asked").getByText("Refund ord_1234 please").waitFor();
    await screenshots(page, "turn-timeline");
  });

  it("the timeline of a turn that waits for a person follows it live: the approval and the steps after it appear", async () => {
    const third = await park("Refund ord_9999 too", "refunds");
    await page.goto(`${p.url}/#/agents/${id}/turns/${third.run}`);
    const timeline = page.getByRole("list", { name: "Timeline" });
    const approval = steps(timeline).filter({ hasText: "Approval of workers/refund" });
    await approval.getByText("waiting", { exact: true }).waitFor();
    await page.evaluate("window.sameDocument = true");
    await p.apiOk("POST", `/v1/agents/${id}/calls/${third.call}/approve`, {});
    await approval.getByText("approved", { exact: true }).waitFor();
    await steps(timeline).filter({ hasText: "Turn completed" }).waitFor();
    expect(await approval.getByText("edited", { exact: true }).count()).toBe(0);
    expect(await steps(timeline).count()).toBe(5);
    expect(await page.evaluate<boolean>("window.sameDocument === true")).toBe(true);
  });
});
