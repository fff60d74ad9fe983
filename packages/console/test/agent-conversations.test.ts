/**
 * An agent's conversations in a real browser (Chromium), against the real
 * daemon: switching between conversations shows each one's own history, its
 * tool calls folded until unfolded; and a turn's call, run by a real SDK
 * worker, shows as running while the worker runs it and turns finished, with
 * its result, when the tool returns, without the page reloading.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Locator, Page } from "playwright-core";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { agentFile, cleanupLater, createProject, short, waitFor, type TestProject } from "../../daemon/test/helpers/spawn-daemon.js";
import { launchBrowser, screenshots, signIn, type ConsoleBrowser } from "./helpers/browser.js";
import { startWorker } from "./helpers/worker.js";

const POLICY = `description: Everything runs without asking.
rules:
  - tool: files/*
    decision: allow
  - tool: workers/*
    decision: allow
`;
const SCRIPTS = {
  // A shopping list and standup notes: which file the call writes says which conversation it belongs to.
  diary: `scenarios:
  - match: milk
    steps:
      - tool_calls:
          - tool: files/write
            args: { path: "groceries.md", content: "{{message}}" }
      - text: "Added to the list: {{result}}"
  - steps:
      - tool_calls:
          - tool: files/write
            args: { path: "standup.md", content: "{{message}}" }
      - text: "Noted for standup: {{result}}"
`,
  // Looks an order up through the worker, then keeps the turn open, so the call's end shows in the running turn.
  tracker: `steps:
  - tool_calls:
      - tool: workers/look_up_order
        args: { order: "ord_4242" }
  - hang: true
`,
};

let p: TestProject;
let browser: ConsoleBrowser;
let page: Page;

beforeAll(async () => {
  const agent = (description: string, model: string, tools: string[]) => agentFile({ description, model, tools, policy: "open" });
  [p, browser] = await Promise.all([
    createProject({
      scripts: SCRIPTS,
      files: {
        "policies/open.yaml": POLICY,
        "agents/diary.md": agent("Keeps lists and notes", "diary", ["files"]),
        "agents/tracker.md": agent("Tracks orders", "tracker", ["workers/*"]),
      },
    }),
    launchBrowser(),
  ]);
  page = await browser.newPage();
  await signIn(page, p.url, p.token);
});

afterEach(() => {
  expect(browser.errors, "console errors").toEqual([]);
});

/** The texts of the person's messages a conversation's history shows, in order. */
const said = (log: Locator) => log.locator(".msg-user .text").allTextContents();
const folded = async (call: Locator) => (await call.getAttribute("open")) === null;

describe("an agent's conversations", () => {
  beforeAll(async () => {
    const id = await p.agentId("diary");
    await p.send(id, "Buy milk and eggs", "groceries");
    await p.send(id, "Shipped the console", "standup");
    await p.send(id, "Oat milk too", "groceries");
  });

  it("switching conversations shows each one's own messages and tool calls, folded until unfolded", async () => {
    const id = await p.agentId("diary");
    await page.goto(`${p.url}/#/agents/${id}`);
    await page.getByRole("heading", { name: "diary", level: 1 }).waitFor();
    const picker = page.getByRole("combobox", { name: "Conversation", exact: true });
    await picker.locator("option", { hasText: "standup" }).waitFor({ state: "attached" });
    expect((await picker.locator("option").allTextContents()).sort()).toEqual(["groceries", "standup"]);

    await picker.selectOption("groceries");
    const groceries = page.getByRole("log", { name: "History of conversation groceries" });
    await waitFor(async () => (await said(groceries)).length === 2, "the groceries history");
    expect(await said(groceries)).toEqual(["Buy milk and eggs", "Oat milk too"]);
    await groceries.getByText('Added to the list: {"path":"groceries.md","bytes":17}').waitFor();
    expect(await groceries.getByText(/Noted for standup/).count()).toBe(0);
    const calls = groceries.locator("details.tool-call");
    expect(await calls.count()).toBe(2);
    // Folded: one line with the tool and its status; the arguments and result stay hidden until unfolded.
    const first = calls.first();
    expect(await folded(first)).toBe(true);
    expect(await first.getByLabel("Arguments of files/write").isVisible()).toBe(false);
    expect(await first.locator("summary").textContent()).toContain("completed");
    // Unfolded by keyboard: the summary takes the focus, Enter opens it.
    await first.locator("summary").focus();
    await page.keyboard.press("Enter");
    await waitFor(async () => !(await folded(first)), "the call to unfold");
    expect(await first.getByLabel("Arguments of files/write").textContent()).toContain('"content": "Buy milk and eggs"');
    expect(await first.getByLabel("Result of files/write").textContent()).toContain('"path": "groceries.md"');
    await screenshots(page, "agent-conversation-groceries");

    await picker.selectOption("standup");
    const standup = page.getByRole("log", { name: "History of conversation standup" });
    await waitFor(async () => (await said(standup)).join() === "Shipped the console", "the standup history");
    await standup.getByText('Noted for standup: {"path":"standup.md","bytes":19}').waitFor();
    expect(await standup.getByText(/Added to the list|milk/).count()).toBe(0);
    // The call unfolded in groceries does not leave this conversation's call unfolded.
    const standupCall = standup.locator("details.tool-call");
    expect(await standupCall.count()).toBe(1);
    expect(await folded(standupCall)).toBe(true);
    await standupCall.locator("summary").click();
    expect(await standupCall.getByLabel("Arguments of files/write").textContent()).toContain('"content": "Shipped the console"');
    expect(await standupCall.getByLabel("Result of files/write").textContent()).toContain('"path": "standup.md"');
    // Folds again.
    await standupCall.locator("summary").click();
    await waitFor(() => folded(standupCall), "the call to fold again");
    expect(await standupCall.getByLabel("Arguments of files/write").isVisible()).toBe(false);
    await screenshots(page, "agent-conversation-standup");

    // A message sent while standup is shown goes to standup, and shows there only.
    await page.getByLabel("Message").fill("Demo on Friday");
    await page.getByRole("button", { name: "Send" }).click();
    await standup.getByText('Noted for standup: {"path":"standup.md","bytes":14}').waitFor({ timeout: 20_000 });
    await waitFor(async () => (await said(standup)).join("|") === "Shipped the console|Demo on Friday", "standup's new message");
    await picker.selectOption("groceries");
    await waitFor(async () => (await said(groceries)).join("|") === "Buy milk and eggs|Oat milk too", "groceries unchanged");
    expect(await groceries.getByText("Demo on Friday").count()).toBe(0);
    expect(await groceries.locator("details.tool-call").count()).toBe(2);
  });

  it("a conversation left before its history arrived never shows in place of the one switched to", async () => {
    const id = await p.agentId("diary");
    await page.goto(`${p.url}/#/agents/${id}`);
    const picker = page.getByRole("combobox", { name: "Conversation", exact: true });
    await picker.locator("option", { hasText: "standup" }).waitFor({ state: "attached" });
    await picker.selectOption("standup");
    const standup = page.getByRole("log", { name: "History of conversation standup" });
    await waitFor(async () => (await said(standup)).includes("Shipped the console"), "the standup history");
    const standupSaid = await said(standup);
    // The daemon's answer for groceries is held back (the request is sent only when the test lets it go).
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let asked!: () => void;
    const groceriesAsked = new Promise<void>((resolve) => (asked = resolve));
    const route = /\/conversations\/groceries\/messages/;
    await page.route(route, async (r) => {
      asked();
      await released;
      await r.continue();
    });
    await picker.selectOption("groceries");
    await groceriesAsked;
    // While groceries loads, standup's messages are not shown as if they were groceries'.
    const groceries = page.getByRole("log", { name: "History of conversation groceries" });
    await groceries.getByRole("status").filter({ hasText: "Loading groceries…" }).waitFor();
    expect(await said(groceries)).toEqual([]);
    await picker.selectOption("standup");
    await waitFor(async () => (await said(standup)).join("|") === standupSaid.join("|"), "the standup history again");
    const answered = page.waitForResponse(route);
    release();
    await (await answered).finished();
    // Give the late answer every chance to be (wrongly) shown: its body is read and rendered within a few frames.
    await page.waitForTimeout(300);
    expect(await said(standup)).toEqual(standupSaid);
    expect(await standup.getByText(/Added to the list/).count()).toBe(0);
    await page.unroute(route);
  });
});

/** A stand-in for the order service the worker's tool asks: it holds each answer until the test gives it. */
async function startOrderService() {
  const held: { url: string; res: ServerResponse }[] = [];
  const server = createServer((req, res) => held.push({ url: req.url ?? "", res }));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  cleanupLater(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held,
    answer(body: unknown) {
      for (const h of held.splice(0)) h.res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
    },
  };
}

describe("the running turn", () => {
  it("a worker's call shows as running while the worker runs it, then as finished with its result, live", async () => {
    const service = await startOrderService();
    const id = await p.agentId("tracker");
    await startWorker(p, "order-worker", id, "workers/look_up_order", { ORDER_SERVICE_URL: service.url });
    await page.goto(`${p.url}/#/agents/${id}`);
    await page.getByRole("heading", { name: "tracker", level: 1 }).waitFor();
    // A mark on this document: a reload would lose it.
    await page.evaluate("window.sameDocument = true");
    const log = page.getByRole("log", { name: "History of conversation main" });
    const call = log.locator("details.tool-call").filter({ hasText: "workers/look_up_order" });
    expect(await call.count()).toBe(0);

    await page.getByLabel("Message").fill("Where is my order?");
    await page.getByRole("button", { name: "Send" }).click();
    // The worker is running the tool: its request waits at the order service.
    await waitFor(() => service.held.length === 1, "the worker's request to the order service", 20_000);
    expect(service.held[0]!.url).toBe("/orders/ord_4242");
    await waitFor(
      async () => (await call.count()) === 1 && (await call.locator("summary").textContent())!.includes("running"),
      "the call as running",
    );
    const kill = page.getByRole("button", { name: /^Kill workers\/look_up_order/ });
    expect(await kill.isVisible()).toBe(true);
    await call.locator("summary").click();
    expect(await call.getByLabel("Arguments of workers/look_up_order").textContent()).toContain('"order": "ord_4242"');
    expect(await call.getByText("No result yet.").isVisible()).toBe(true);
    const element = await call.elementHandle();
    await screenshots(page, "agent-call-running");

    // The tool returns: the same call, still unfolded, turns completed and shows what the tool returned.
    service.answer({ order: "ord_4242", status: "shipped", carrier: "DHL" });
    await waitFor(async () => (await call.locator("summary").textContent())!.includes("completed"), "the call as completed");
    expect(await element!.evaluate((el) => (el as unknown as { isConnected: boolean }).isConnected)).toBe(true);
    expect(await folded(call)).toBe(false);
    const result = call.getByLabel("Result of workers/look_up_order");
    expect(await result.textContent()).toContain('"status": "shipped"');
    expect(await result.textContent()).toContain('"carrier": "DHL"');
    expect(await kill.count()).toBe(0);
    // The turn is still running (its model keeps thinking): this came from the live stream, not the saved history.
    expect(await page.locator(".msg-live").count()).toBe(1);
    expect(await page.locator(".msg-live .who").textContent()).toContain("running");
    expect(await page.evaluate<boolean>("window.sameDocument === true")).toBe(true);
    await screenshots(page, "agent-call-completed");

    const cancel = page.getByRole("button", { name: "Cancel turn" });
    await cancel.click();
    await p.waitForEvent(id, (e) => short(e.type) === "turn.cancelled");
    await waitFor(async () => (await page.locator(".msg-live").count()) === 0, "the turn to settle into the history");
    // The saved history keeps the call with its result.
    await log.locator("details.tool-call").filter({ hasText: "completed" }).waitFor();
  });
});
