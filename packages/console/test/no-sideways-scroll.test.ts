/**
 * Long data never makes a page scroll sideways: with a long unbroken JSON
 * string in a message (so in "Recent context", the history, the turns list
 * and the events) and in a tool call's arguments (the approval card, the
 * timeline), and an agent whose description is one long word, every page of
 * the console fits the window at 390 and 1280 px in Chromium
 * (document.scrollingElement.scrollWidth <= clientWidth). Screenshots of
 * each land in test-output/ for people to look at.
 */
import type { Page } from "playwright-core";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, short, type TestProject } from "../../daemon/test/helpers/spawn-daemon.js";
import { expectNoSidewaysScroll, launchBrowser, NARROW, screenshots, WIDE, type ConsoleBrowser } from "./helpers/browser.js";

/** One JSON string of 3000 characters without a space: nothing in it lets a line break. */
const LONG_JSON = JSON.stringify({ order: "ord_1234", blob: "Q".repeat(3000) });
const LONG_WORD = "Supercalifragilisticexpialidocious".repeat(8);

let p: TestProject;
let browser: ConsoleBrowser;
let page: Page;
let keeper: string;
let firstRun: string;

beforeAll(async () => {
  [p, browser] = await Promise.all([
    createProject({
      scripts: {
        keeper: `steps:
  - tool_calls:
      - tool: files/write
        args: { path: "blob.json", content: "{{message}}" }
  - text: "Saved {{message}}"
`,
      },
      files: {
        "policies/careful.yaml": "rules:\n  - tool: files/write\n    decision: ask\n    reason: Writing needs a person.\n",
        "agents/keeper.md": agentFile({ description: "Keeps blobs", model: "keeper", tools: ["files"], policy: "careful" }),
        "agents/wordy.md": agentFile({ description: LONG_WORD, model: "keeper" }),
      },
    }),
    launchBrowser(),
  ]);
  keeper = await p.agentId("keeper");
  // A finished turn with the long string (in the history and "Recent context"), then one that waits with it in its arguments.
  for (const text of [LONG_JSON, `again ${LONG_JSON}`]) {
    const before = (await p.events(keeper)).length;
    await p.apiOk("POST", `/v1/agents/${keeper}/messages`, { text });
    const asked = await p.waitForEvent(keeper, (e) => short(e.type) === "approval.requested" && e.seq > before);
    if (text === LONG_JSON) {
      firstRun = asked.run!;
      await p.apiOk("POST", `/v1/agents/${keeper}/calls/${asked.data.call as string}/approve`, {});
      await p.waitForTurnEnd(keeper, firstRun);
    }
  }
  page = await browser.newPage();
});

afterEach(() => {
  expect(browser.errors, "console errors").toEqual([]);
});

/** Checks the page as it is now at both widths, without a screenshot (for states in between). */
async function fits(what: string): Promise<void> {
  for (const size of [WIDE, NARROW]) {
    await page.setViewportSize(size);
    await expectNoSidewaysScroll(page, `${what} at ${size.width} px`);
  }
  await page.setViewportSize(WIDE);
}

describe("no page scrolls sideways with long data", () => {
  it("sign-in, and the agents list with the waiting call's long arguments and recent context, searched", async () => {
    await page.goto(p.url + "/");
    await page.getByLabel("Token").waitFor();
    await screenshots(page, "long-sign-in");
    await page.getByLabel("Token").fill(p.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    const card = page.getByRole("article").filter({ hasText: "files/write" });
    await card.waitFor();
    await card.getByText("Recent context").click();
    await card.locator("ol.context li").filter({ hasText: "QQQQ" }).first().waitFor();
    await screenshots(page, "long-agents");
    await page.getByLabel("Search agents").fill("Supercalifragilistic");
    await page.getByRole("link", { name: "wordy", exact: true }).waitFor();
    await screenshots(page, "long-agents-search");
  });

  it("an agent's conversation: the approval card, its recent context, the history with the call unfolded, a new conversation", async () => {
    await page.goto(`${p.url}/#/agents/${keeper}`);
    const card = page.getByRole("article").filter({ hasText: "files/write" });
    await card.locator("ol.context li").filter({ hasText: "QQQQ" }).first().waitFor();
    const log = page.getByRole("log");
    await log.getByText(/^Saved \{"order"/).waitFor();
    await log.locator("details.tool-call").first().locator("summary").click();
    await screenshots(page, "long-conversation");
    await card.getByRole("button", { name: "Edit" }).click();
    await fits("the arguments editor");
    await card.getByRole("button", { name: "Back" }).click();
    await page.getByRole("button", { name: "New conversation" }).click();
    await page.getByLabel("Name").fill(LONG_WORD.slice(0, 190));
    await fits("the new conversation form");
  });

  it("the turns list, a turn's timeline with the call unfolded", async () => {
    await page.goto(`${p.url}/#/agents/${keeper}/turns`);
    await page.getByRole("table", { name: "Turns of main" }).waitFor();
    await screenshots(page, "long-turns");
    await page.goto(`${p.url}/#/agents/${keeper}/turns/${firstRun}`);
    const timeline = page.getByRole("list", { name: "Timeline" });
    await timeline.getByText("Turn completed").waitFor();
    await timeline.locator("details.step-data").first().locator("summary").click();
    await screenshots(page, "long-timeline");
  });

  it("the events, with raw JSON open, and a search", async () => {
    await page.goto(`${p.url}/#/agents/${keeper}/events`);
    const list = page.getByRole("list", { name: "Events" });
    const planned = list.getByRole("listitem").filter({ hasText: "round.saved" }).first();
    await planned.getByRole("button", { name: /^Raw JSON of event/ }).click();
    await planned.locator("pre").waitFor();
    await screenshots(page, "long-events");
    await page.getByLabel("Search events").fill("QQQQQQQQ");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.getByRole("list", { name: "Events that hold QQQQQQQQ" }).getByRole("listitem").first().waitFor();
    await fits("the event search");
  });

  it("the configuration, and an agent whose description is one long word", async () => {
    await page.goto(`${p.url}/#/agents/${keeper}/configuration`);
    await page.getByText("Tools it can call now").waitFor();
    await fits("the configuration");
    await page.goto(`${p.url}/#/agents/${await p.agentId("wordy")}/configuration`);
    await page.getByRole("heading", { name: "wordy", level: 1 }).waitFor();
    await screenshots(page, "long-description");
  });
});
