/**
 * Finding things and starting over, in a real browser (Chromium) against the
 * real daemon: the agents list narrows to the agents whose name or
 * description holds a text; an agent's events are searched by the daemon
 * (q=) for the words of a message or reply; and "New conversation" starts a
 * conversation with its first message, which runs as a turn.
 */
import type { Page } from "playwright-core";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, short, waitFor, type TestProject, type WireEvent } from "../../daemon/test/helpers/spawn-daemon.js";
import { launchBrowser, screenshots, signIn, type ConsoleBrowser } from "./helpers/browser.js";

let p: TestProject;
let browser: ConsoleBrowser;
let page: Page;
let diary: string;

beforeAll(async () => {
  [p, browser] = await Promise.all([
    createProject({
      scripts: { parrot: 'steps:\n  - text: "You said: {{message}}"\n' },
      files: {
        "agents/diary.md": agentFile({ description: "Keeps a diary of errands", model: "parrot" }),
        "agents/refunds.md": agentFile({ description: "Refunds ORDERS on request", model: "parrot" }),
        "agents/notes.md": agentFile({ description: "Takes meeting notes", model: "parrot" }),
      },
    }),
    launchBrowser(),
  ]);
  diary = await p.agentId("diary");
  await p.send(diary, "Buy oat milk and bread");
  await p.send(diary, "Ship the release on Friday");
  page = await browser.newPage();
  await signIn(page, p.url, p.token);
});

afterEach(() => {
  expect(browser.errors, "console errors").toEqual([]);
});

describe("search", () => {
  it("the agents list narrows to names and descriptions that hold the text, whatever its case", async () => {
    const rows = page.getByRole("row").filter({ has: page.getByRole("link") });
    const names = async () => (await rows.getByRole("link").allTextContents()).sort();
    const all = (await p.apiOk<{ agents: { name: string }[] }>("GET", "/v1/agents")).agents.map((a) => a.name).sort();
    await waitFor(async () => (await names()).join() === all.join(), "every agent");
    const search = page.getByRole("searchbox", { name: "Search agents" });
    // The name, and a description (the init template's helper "keeps notes in its file space").
    await search.fill("notes");
    await waitFor(async () => (await names()).join() === "helper,notes", "the agent named notes and the one that keeps notes");
    await search.fill("orders");
    await waitFor(async () => (await names()).join() === "refunds", "the agent whose description says ORDERS");
    await page.getByText("1 of 4 agents match.").waitFor();
    await screenshots(page, "agents-search");
    await search.fill("errands");
    await waitFor(async () => (await names()).join() === "diary", "the agent whose description says errands");
    await search.fill("zebra");
    await page.getByText("No agent's name or description holds “zebra”.").waitFor();
    expect(await rows.count()).toBe(0);
    await search.fill("");
    await waitFor(async () => (await names()).join() === all.join(), "every agent again");
  });

  it("an agent's events: the daemon finds those that hold the words, and the live list comes back", async () => {
    await page.goto(`${p.url}/#/agents/${diary}/events`);
    await page.getByRole("list", { name: "Events" }).getByText("Ship the release on Friday").first().waitFor();
    await page.getByRole("searchbox", { name: "Search events" }).fill("OAT MILK");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    const found = page.getByRole("list", { name: "Events that hold OAT MILK" });
    await found.getByRole("listitem").first().waitFor();
    const expected = (await p.apiOk<{ events: WireEvent[] }>("GET", `/v1/agents/${diary}/events?q=${encodeURIComponent("OAT MILK")}`))
      .events;
    expect(expected.map((e) => short(e.type)).sort()).toEqual(["message.queued", "model.replied", "turn.completed"]);
    const lines = await found.getByRole("listitem").allTextContents();
    expect(lines).toHaveLength(expected.length);
    for (const line of lines) expect(line.toLowerCase()).toContain("oat milk");
    expect(lines.join()).not.toContain("release");
    expect(lines.some((l) => l.includes("Message for main") && l.includes("Buy oat milk and bread"))).toBe(true);
    expect(lines.some((l) => l.includes("Turn completed") && l.includes("You said: Buy oat milk and bread"))).toBe(true);
    await page.getByText(`${expected.length} events hold “OAT MILK”`).waitFor();
    await screenshots(page, "events-search");
    await page.getByRole("button", { name: "Show live events" }).click();
    await page.getByRole("list", { name: "Events" }).getByText("Ship the release on Friday").first().waitFor();
  });
});

describe("a new conversation", () => {
  it("starts with a name and a first message, checked before sending, and runs as a turn", async () => {
    await page.goto(`${p.url}/#/agents/${diary}`);
    await page.getByRole("heading", { name: "diary", level: 1 }).waitFor();
    const open = page.getByRole("button", { name: "New conversation" });
    await open.click();
    const form = page.getByRole("form", { name: "New conversation" });
    const start = form.getByRole("button", { name: "Start conversation" });
    await start.click();
    await form.getByText("Give the conversation a name, such as refund-1234.").waitFor();
    await form.getByLabel("Name").fill("main");
    await form.getByLabel("First message").fill("Hello");
    await start.click();
    await form.getByText("There is a conversation main already; pick it in the list, or choose another name.").waitFor();
    await form.getByLabel("Name").fill("planning");
    await form.getByLabel("First message").fill("");
    await start.click();
    await form.getByText("Write the first message: it starts the conversation.").waitFor();
    await form.getByLabel("First message").fill("Plan the launch party");
    await screenshots(page, "new-conversation");
    await start.click();
    // The page switches to the new conversation, which shows the message and the reply.
    const log = page.getByRole("log", { name: "History of conversation planning" });
    await log.getByText("You said: Plan the launch party").waitFor({ timeout: 20_000 });
    await log.locator(".msg-user").getByText("Plan the launch party").waitFor();
    expect(await page.getByRole("combobox", { name: "Conversation", exact: true }).inputValue()).toBe("planning");
    expect(await form.count()).toBe(0);
    const conversations = await p.apiOk<{ conversations: { key: string }[] }>("GET", `/v1/agents/${diary}/conversations`);
    expect(conversations.conversations.map((c) => c.key).sort()).toEqual(["main", "planning"]);
    // Its turn is in its list of turns.
    await page.getByRole("link", { name: "Turns", exact: true }).click();
    const rows = page.getByRole("table", { name: "Turns of planning" }).locator("tbody tr");
    await rows.first().waitFor();
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain("Plan the launch party");
  });
});
