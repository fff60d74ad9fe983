/**
 * The web console in a real browser (Chromium), against the real daemon it is
 * served by: sign in, see what waits for a person, approve, deny, edit
 * arguments, answer a question, follow a reply as it streams, cancel, kill, clear. Controls are
 * found by their accessible names, and any console error fails the test.
 * Screenshots of each page at 1280 and 390 px land in test-output/.
 */
import type { Page } from "playwright-core";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { chunk, sse, startOpenAiLoopback, usageChunk, type OpenAiLoopback } from "../../daemon/test/helpers/openai-loopback.js";
import { agentFile, createProject, short, waitFor, type TestProject } from "../../daemon/test/helpers/spawn-daemon.js";
import { isFocused, launchBrowser, screenshots, shiftsSince, signIn, tabTo, type ConsoleBrowser } from "./helpers/browser.js";
import { startWorker } from "./helpers/worker.js";

const POLICY = `description: Writes need a person.
rules:
  - tool: files/write
    decision: ask
    reason: Writing needs a person's OK.
  - tool: files/*
    decision: allow
  - tool: workers/*
    decision: allow
`;
const SCRIPTS = {
  writer: `steps:
  - tool_calls:
      - tool: files/write
        args: { path: "refund.md", content: "{{message}}" }
  - text: "Saved: {{result}}"
`,
  noter: `steps:
  - tool_calls:
      - tool: files/write
        args: { path: "note.md", content: "{{message}}" }
  - tool_calls:
      - tool: files/read
        args: { path: "note.md" }
  - text: "The note says: {{result}}"
`,
  hanger: `steps:
  - hang: true
`,
  asker: `steps:
  - tool_calls:
      - tool: person/ask
        args: { question: "Refund {{message}} in full?", choices: ["in full", "half"] }
  - text: "Told: {{result}}"
`,
  stocker: `steps:
  - tool_calls:
      - tool: workers/wait_for_stock
        args: { sku: "A-1" }
  - text: "Gave up: {{result}}"
`,
};

let p: TestProject;
let model: OpenAiLoopback;
let browser: ConsoleBrowser;
let page: Page;

beforeAll(async () => {
  model = await startOpenAiLoopback();
  const careful = (description: string, script: string, tools: string[] = ["files"]) =>
    agentFile({ description, model: script, tools, policy: "careful" });
  [p, browser] = await Promise.all([
    createProject({
      // The webhook trigger's signing key (Standard Webhooks: whsec_ + base64).
      env: { REFUND_HOOK: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" },
      scripts: SCRIPTS,
      models: { loop: { provider: "openai-compatible", model: "loopback-model", base_url: model.baseUrl, api_key: "x" } },
      files: {
        "policies/careful.yaml": POLICY,
        "agents/refunds.md": agentFile({
          description: "Refunds orders on request",
          model: "writer",
          tools: ["files"],
          policy: "careful",
          triggers: [
            { schedule: "0 9 * * 1-5", message: "Check the refund queue" },
            { webhook: "refund-requests", secret: "${env:REFUND_HOOK}", message: "Refund {{order}}" },
          ],
        }),
        "agents/notes.md": careful("Keeps notes", "noter"),
        "agents/hanger.md": careful("Thinks for a long time", "hanger"),
        "agents/stocker.md": careful("Waits for stock", "stocker", ["workers/*"]),
        "agents/chat.md": agentFile({ description: "Talks", model: "loop" }),
        "agents/asker.md": agentFile({ description: "Asks before refunding", model: "asker", tools: ["person"] }),
        "agents/broken.md": "---\ndescription: Has a typo\nmodle: writer\n---\nHello.\n",
      },
    }),
    launchBrowser(),
  ]);
  page = await browser.newPage();
});

afterEach(() => {
  expect(browser.errors, "console errors").toEqual([]);
  // Works offline: the page reaches only the daemon that serves it (no CDN, no fonts from elsewhere).
  expect(
    browser.requests.filter((u) => !u.startsWith(p.url + "/")),
    "requests to anywhere but the daemon",
  ).toEqual([]);
});

/** Sends a message through the API and waits until its files/write call waits for approval. */
async function park(agent: string, text: string): Promise<{ id: string; call: string; run: string }> {
  const id = await p.agentId(agent);
  const before = (await p.events(id)).length;
  await p.apiOk("POST", `/v1/agents/${id}/messages`, { text });
  const asked = await p.waitForEvent(id, (e) => short(e.type) === "approval.requested" && e.seq > before);
  return { id, call: asked.data.call as string, run: asked.run! };
}

const visible = (text: string | RegExp, within: Page = page) => within.getByText(text).first().waitFor({ timeout: 20_000 });

describe("signing in", () => {
  it("with the token: the agents list shows the parked agent first, then the unreadable one, with model, spend and last activity", async () => {
    await park("refunds", "refund order ord_1234");
    await page.goto(p.url + "/");
    await page.getByLabel("Token").waitFor();
    await screenshots(page, "sign-in");
    await page.getByLabel("Token").fill(p.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Agents", level: 1 }).waitFor();
    await visible("Waiting for approval");
    const rows = page.getByRole("row").filter({ has: page.getByRole("link") });
    const all = (await p.apiOk<{ agents: unknown[] }>("GET", "/v1/agents")).agents.length;
    await waitFor(async () => (await rows.count()) === all, "a row for every agent");
    expect(await rows.nth(0).getByRole("link").textContent()).toBe("refunds");
    expect(await rows.nth(0).textContent()).toContain("parked");
    expect(await rows.nth(1).getByRole("link").textContent()).toBe("broken");
    expect(await rows.nth(1).textContent()).toContain("unreadable");
    await waitFor(async () => (await rows.nth(0).textContent())!.includes("$0.00"), "refunds' spend");
    expect(await rows.nth(0).textContent()).toContain("writer");
    expect(await rows.nth(0).textContent()).toMatch(/just now|s ago/);
    // Spend today against the caps the agent runs under.
    const chat = rows.filter({ has: page.getByRole("link", { name: "chat", exact: true }) });
    expect(await chat.textContent()).toContain("$0.00 of $5.00 a day · $0.50 a turn");
    // The token is kept for this tab only.
    expect(await page.evaluate<number>("sessionStorage.length")).toBe(1);
    expect(await page.evaluate<number>("localStorage.length")).toBe(0);
    await screenshots(page, "agents");
  });

  it("with a one-time link from wardrik console: no pasting, the code leaves the address bar, and the link works once", async () => {
    const r = await p.cli(["console", "--no-open"]);
    const url = r.stdout.trim();
    const tab = await browser.newPage();
    await tab.goto(url);
    await tab.getByRole("heading", { name: "Agents", level: 1 }).waitFor();
    expect(tab.url()).toBe(`${p.url}/#/`);
    await tab.close();
    // A second use of the same link is refused (the 401 answer is the one console error this expects).
    const again = await browser.newPage();
    await again.goto(url);
    await again.getByText(/This sign-in link is not valid/).waitFor();
    await again.getByLabel("Token").waitFor();
    expect(browser.errors.splice(0)).toEqual([expect.stringContaining("401")]);
    await again.close();
  });
});

describe("approvals", () => {
  it("open the parked agent, see the call's arguments and rule, approve, see the tool's result", async () => {
    await page.getByRole("link", { name: "refunds", exact: true }).first().click();
    await page.getByRole("heading", { name: "refunds", level: 1 }).waitFor();
    const card = page.getByRole("article").filter({ hasText: "files/write" });
    await card.waitFor();
    expect(await card.getByLabel("Arguments of files/write").textContent()).toContain('"content": "refund order ord_1234"');
    expect(await card.textContent()).toContain("Writing needs a person's OK.");
    expect(await card.textContent()).toMatch(/Asked by policy rule policies\/careful\.yaml:3/);
    // The recent context: what was said in the conversation before the call.
    await card.getByRole("listitem").filter({ hasText: "Message refund order ord_1234" }).waitFor();
    await screenshots(page, "agent-approval");
    await card.getByRole("button", { name: "Approve", exact: true }).click();
    await visible('Saved: {"path":"refund.md","bytes":21}');
    await page.getByRole("article").filter({ hasText: "files/write" }).waitFor({ state: "detached" });
    // The call is folded in the history; unfolding it shows the arguments and the result.
    const call = page.getByRole("log").locator("details.tool-call").first();
    await call.locator("summary").click();
    expect(await call.getByLabel("Result of files/write").textContent()).toContain('"bytes": 21');
    await screenshots(page, "agent-conversation");
  });

  it("edit the arguments as JSON, checked against the tool's schema, then approve: the tool gets the edited arguments", async () => {
    const { id, call } = await park("notes", "draft from the model");
    await page.goto(`${p.url}/#/agents/${id}`);
    const card = page.getByRole("article").filter({ hasText: call });
    // The parked turn's call shows once in the conversation, as waiting (not again from the saved history).
    const log = page.getByRole("log");
    await log.locator("details.tool-call").filter({ hasText: "waiting" }).waitFor();
    expect(await log.locator("details.tool-call").count()).toBe(1);
    await card.getByRole("button", { name: "Edit" }).click();
    const editor = card.getByLabel("Arguments (JSON)");
    const approve = card.getByRole("button", { name: "Approve with edits" });
    await editor.fill('{"path": "note.md", ');
    await card.getByText(/Not valid JSON/).waitFor();
    expect(await approve.isDisabled()).toBe(true);
    await editor.fill('{"path": "note.md", "mode": "append"}');
    await card.getByText('arguments needs property "content"').waitFor();
    await card.getByText('arguments has property "mode", which the tool does not take').waitFor();
    expect(await approve.isDisabled()).toBe(true);
    await editor.fill('{"path": "note.md", "content": "edited in the console"}');
    await card.getByText("The arguments fit the tool's schema.").waitFor();
    await screenshots(page, "approval-edit");
    await approve.click();
    await visible("The note says: edited in the console");
    const granted = (await p.events(id)).find((e) => short(e.type) === "approval.granted" && e.data.call === call)!;
    expect(granted.data).toMatchObject({
      args: { path: "note.md", content: "edited in the console" },
      original_args: { path: "note.md", content: "draft from the model" },
    });
  });

  it("deny with a reason from the agents list, by keyboard alone", async () => {
    const { id, call } = await park("refunds", "refund everything");
    await page.goto(`${p.url}/#/`);
    const card = page.getByRole("article").filter({ hasText: call });
    await card.waitFor();
    await tabTo(page, card.getByRole("button", { name: "Deny", exact: true }));
    await page.keyboard.press("Enter");
    // The reason field takes the focus.
    const reason = card.getByLabel("Reason");
    await waitFor(() => isFocused(reason), "the reason field to take the focus");
    await page.keyboard.type("Not without a ticket.");
    await tabTo(page, card.getByRole("button", { name: "Deny with reason" }));
    await page.keyboard.press("Enter");
    const denied = await p.waitForEvent(id, (e) => short(e.type) === "approval.denied" && e.data.call === call);
    expect(denied.data.reason).toBe("Not without a ticket.");
    // Decided, the call leaves the list of waiting ones (the card may say "Denied" for a moment first).
    await card.waitFor({ state: "detached" });
  });
});

describe("the agents list", () => {
  it("updates live, without reloading: an agent whose call starts waiting moves to the top with its approval", async () => {
    await page.goto(`${p.url}/#/`);
    const rows = page.getByRole("row").filter({ has: page.getByRole("link") });
    await rows.first().waitFor();
    // A mark on this document: a reload would lose it.
    await page.evaluate("window.sameDocument = true");
    const { call } = await park("refunds", "refund order ord_5678");
    const card = page.getByRole("article").filter({ hasText: call });
    await card.waitFor();
    const refunds = rows.filter({ has: page.getByRole("link", { name: "refunds", exact: true }) });
    await waitFor(async () => (await rows.nth(0).getByRole("link").textContent()) === "refunds", "refunds to move to the top");
    expect(await refunds.textContent()).toContain("parked");
    await card.getByRole("button", { name: "Approve", exact: true }).click();
    await waitFor(async () => (await refunds.textContent())!.includes("idle"), "refunds to go back to idle");
    expect(await card.count()).toBe(0);
    expect(await page.evaluate<boolean>("window.sameDocument === true")).toBe(true);
  });
});

describe("orgs", () => {
  it("the admin token switches to another org; an org token sees only its own, with nothing to switch", async () => {
    const acme = (await p.apiOk<{ token: string }>("POST", "/v1/tokens", { org: "acme", name: "console" })).token;
    const made = await p.api("POST", "/v1/agents", { name: "acme-bot", description: "Works for acme", model: "writer" }, { token: acme });
    expect(made.status).toBe(201);
    await page.goto(`${p.url}/#/`);
    const org = page.getByLabel("Org");
    // The list of orgs is fetched again when the switch is used, so an org made since signing in is there.
    await org.focus();
    await org.locator("option", { hasText: "acme" }).waitFor({ state: "attached" });
    await org.selectOption("acme");
    await page.getByRole("link", { name: "acme-bot", exact: true }).waitFor();
    expect(await page.getByRole("link", { name: "refunds", exact: true }).count()).toBe(0);
    await screenshots(page, "agents-other-org");
    await page.getByLabel("Org").selectOption("default");
    await page.getByRole("link", { name: "refunds", exact: true }).waitFor();
    expect(await page.getByRole("link", { name: "acme-bot", exact: true }).count()).toBe(0);

    const tab = await browser.newPage();
    await signIn(tab, p.url, acme);
    await tab.getByRole("link", { name: "acme-bot", exact: true }).waitFor();
    expect(await tab.getByRole("link", { name: "refunds", exact: true }).count()).toBe(0);
    expect(await tab.getByLabel("Org").count()).toBe(0);
    await tab.getByText("Org acme").waitFor();
    await tab.close();
  });
});

describe("a turn as it runs", () => {
  it("send a message and watch the reply stream in, with no layout shift", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const frames = sse([
      chunk({ role: "assistant", content: "" }),
      chunk({ content: "The first words arrive " }),
      chunk({ content: "before the rest. " }),
      chunk({ content: "And the rest follows." }),
      chunk({}, "stop"),
      usageChunk(40, 12),
    ]);
    model.handle(() => ({ pieces: [...frames.slice(0, 3), gate, ...frames.slice(3)] }));
    const id = await p.agentId("chat");
    await page.goto(`${p.url}/#/agents/${id}`);
    await page.getByRole("heading", { name: "chat", level: 1 }).waitFor();
    await page.getByLabel("Message").fill("Tell me something");
    const since = await page.evaluate(() => performance.now());
    await page.getByRole("button", { name: "Send" }).click();
    // The first words show while the model is still answering.
    await visible("The first words arrive before the rest.");
    expect(await page.getByText("And the rest follows.").count()).toBe(0);
    expect(await page.locator(".msg-live").getByText("running").count()).toBe(1);
    release();
    await visible("The first words arrive before the rest. And the rest follows.");
    await waitFor(async () => (await page.locator(".msg-live").count()) === 0, "the turn to settle into the history");
    expect(await shiftsSince(page, since)).toEqual([]);
    await screenshots(page, "agent-streamed");
  });

  it("cancel a running turn", async () => {
    const id = await p.agentId("hanger");
    await page.goto(`${p.url}/#/agents/${id}`);
    await page.getByLabel("Message").fill("Think hard");
    await page.getByRole("button", { name: "Send" }).click();
    const cancel = page.getByRole("button", { name: "Cancel turn" });
    await waitFor(() => cancel.isEnabled(), "Cancel turn to be enabled");
    await cancel.click();
    await p.waitForEvent(id, (e) => short(e.type) === "turn.cancelled");
    await waitFor(() => cancel.isDisabled(), "Cancel turn to be disabled again");
  });

  it("kill a running call: the turn goes on", async () => {
    const id = await p.agentId("stocker");
    await startWorker(p, "stock-worker", id, "workers/wait_for_stock");
    await page.goto(`${p.url}/#/agents/${id}`);
    await page.getByLabel("Message").fill("Wait for A-1");
    await page.getByRole("button", { name: "Send" }).click();
    const kill = page.getByRole("button", { name: /^Kill workers\/wait_for_stock/ });
    await kill.waitFor({ timeout: 20_000 });
    await kill.click();
    // The model is told a person stopped the call, and the turn goes on to its reply.
    await visible("Gave up: A person stopped this call before it finished.");
    expect((await p.events(id)).some((e) => short(e.type) === "call.killed")).toBe(true);
  });

  it("clear a conversation's history", async () => {
    const id = await p.agentId("refunds");
    await page.goto(`${p.url}/#/agents/${id}`);
    await visible(/Saved: /);
    await page.getByRole("button", { name: "Clear history" }).click();
    await page.getByRole("button", { name: "Clear main's history" }).click();
    await visible("No messages in main yet.");
    await p.waitForEvent(id, (e) => short(e.type) === "conversation.cleared");
  });
});

describe("the rest of an agent", () => {
  it("events read as one line per type, filter by type, and show their raw JSON on demand", async () => {
    const id = await p.agentId("notes");
    const events = await p.events(id);
    const granted = events.find((e) => short(e.type) === "approval.granted" && e.data.original_args !== undefined)!;
    await page.goto(`${p.url}/#/agents/${id}/events`);
    const list = page.getByRole("list", { name: "Events" });
    const row = (seq: number) => list.getByRole("listitem").filter({ has: page.getByText(`#${seq}`, { exact: true }) });
    const line = async (type: string) => {
      const e = events.find((x) => short(x.type) === type)!;
      return (await row(e.seq).textContent())!;
    };
    await row(granted.seq).waitFor();
    // The decision, and what a person changed: the arguments the call ran with, then what the model asked for.
    const grantedLine = (await row(granted.seq).textContent())!;
    expect(grantedLine).toContain("files/write approved");
    expect(grantedLine).toContain("with edited arguments");
    expect(grantedLine).toContain(
      '{"path":"note.md","content":"edited in the console"} (the model asked for {"path":"note.md","content":"draft from the model"})',
    );
    expect(await line("approval.requested")).toContain("files/write waits for approval");
    expect(await line("message.queued")).toMatch(/Message for main.*draft from the model/);
    expect(await line("turn.started")).toContain("Turn started in main");
    expect(await line("model.replied")).toMatch(/Model replied: \d+ tokens in, \d+ out, \$0\.00/);
    // A call's start shows its arguments: the edited ones, once a person edited them.
    const started = events.find((e) => short(e.type) === "call.started" && e.data.call === granted.data.call)!;
    expect(await row(started.seq).textContent()).toMatch(/files\/write started.*"content":"edited in the console"/);
    expect(await line("call.completed")).toMatch(/files\/write completed.*"bytes":21/);
    expect(await line("turn.completed")).toMatch(/Turn completed: 3 model calls, \$0\.00.*The note says: edited in the console/);
    // No JSON until asked for; the toggle shows the whole event and hides it again.
    expect(await list.locator("pre").count()).toBe(0);
    const toggle = row(granted.seq).getByRole("button", { name: `Raw JSON of event ${granted.seq}, approval.granted` });
    expect(await toggle.getAttribute("aria-expanded")).toBe("false");
    await toggle.click();
    const raw = row(granted.seq).getByLabel(`Event ${granted.seq}, approval.granted, as JSON`);
    expect(await raw.textContent()).toContain('"original_args"');
    expect(await raw.textContent()).toContain(`"seq": ${granted.seq}`);
    expect(await toggle.getAttribute("aria-expanded")).toBe("true");
    await screenshots(page, "agent-events");
    await toggle.click();
    await raw.waitFor({ state: "detached" });
    // Filters by type.
    expect(await list.getByText("call.completed").count()).toBeGreaterThan(0);
    await page.getByRole("checkbox", { name: "call" }).uncheck();
    await waitFor(async () => (await list.getByText("call.completed").count()) === 0, "call events to be filtered out");
    expect(await list.getByText("approval.granted").count()).toBe(1);
    await page.getByRole("checkbox", { name: "call" }).check();
  });

  it("configuration, read only: policy, tools, limits, triggers", async () => {
    const id = await p.agentId("refunds");
    await page.goto(`${p.url}/#/agents/${id}/configuration`);
    await visible("policies/careful.yaml");
    await visible("files/write");
    // The policy's rules in the order they are tried, each with where it is written, then the default.
    const rules = page.getByRole("list", { name: "Policy rules" });
    await rules.waitFor();
    const items = rules.getByRole("listitem");
    expect(await items.count()).toBe(4);
    const first = (await items.nth(0).textContent()) ?? "";
    expect(first).toContain("files/write");
    expect(first).toContain("ask");
    expect(first).toContain("Writing needs a person's OK.");
    expect(first).toContain("policies/careful.yaml:3");
    expect(await items.nth(1).textContent()).toMatch(/files\/\*\s*allow/);
    expect(await items.nth(3).textContent()).toContain("otherwise: read-only calls run, others ask a person");
    // Its triggers, with when they fire; the webhook's secret is withheld (not even its reference shows).
    const triggers = page.getByLabel("Triggers");
    expect(await triggers.textContent()).toContain('"schedule": "0 9 * * 1-5"');
    expect(await triggers.textContent()).toContain('"webhook": "refund-requests"');
    expect(await triggers.textContent()).not.toContain('"secret"');
    expect(await triggers.textContent()).not.toContain("REFUND_HOOK");
    expect(await page.getByRole("textbox").count()).toBe(0);
    await screenshots(page, "agent-configuration");
  });

  it("an unreadable agent shows why, with its file and line, and takes no messages", async () => {
    const id = await p.agentId("broken");
    await page.goto(`${p.url}/#/agents/${id}`);
    const section = page.getByRole("region", { name: "Unreadable" });
    await section.waitFor();
    expect(await section.textContent()).toContain("agents/broken.md:3: ");
    expect(await section.textContent()).toContain("modle");
    expect(await page.getByLabel("Message").isDisabled()).toBe(true);
    await screenshots(page, "agent-unreadable");
  });
});

describe("questions", () => {
  it("a question waits on the agent's page with a button per choice; a click answers it, and the turn goes on", async () => {
    const id = await p.agentId("asker");
    await p.apiOk("POST", `/v1/agents/${id}/messages`, { text: "order 9" });
    const asked = await p.waitForEvent(id, (e) => short(e.type) === "question.asked");
    await page.goto(`${p.url}/#/agents/${id}`);
    const card = page.getByRole("article").filter({ hasText: "Refund order 9 in full?" });
    await card.waitFor();
    // A question is answered, not approved: it waits under "Waiting for an answer", here and on the list of agents.
    expect(await card.getByRole("button", { name: "Approve" }).count()).toBe(0);
    await page.getByRole("heading", { name: "Waiting for an answer" }).waitFor();
    await page.goto(`${p.url}/#/agents`);
    await page.getByRole("heading", { name: /^Waiting for (an answer|approval or an answer)$/ }).waitFor();
    await page.goto(`${p.url}/#/agents/${id}`);
    await card.waitFor();
    await screenshots(page, "agent-question");
    await card.getByRole("group", { name: "Choices" }).getByRole("button", { name: "half" }).click();
    await visible('Told: {"answer":"half"}');
    const end = await p.waitForTurnEnd(id, String(asked.run));
    expect(end.data.reply).toBe('Told: {"answer":"half"}');
    const answered = (await p.events(id)).find((e) => short(e.type) === "question.answered")!;
    expect(answered.data).toMatchObject({ call: asked.data.call, answer: "half", by: expect.stringMatching(/^token:/) });
  });
});
