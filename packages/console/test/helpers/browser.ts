/**
 * A real Chromium for the console's end-to-end tests: Debian's `chromium`
 * package driven by playwright-core (never a browser playwright downloads),
 * with a fresh profile per test file. Every console error and uncaught page
 * error is collected, so a test can fail on any; screenshots go to
 * packages/console/test-output/ (ignored by git) for people to look at.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type BrowserContext, type ElementHandle, type Locator, type Page } from "playwright-core";
import { cleanupLater } from "../../../daemon/test/helpers/spawn-daemon.js";

export const CHROMIUM = process.env.WARDRIK_CHROMIUM ?? "/usr/bin/chromium";
export const SCREENSHOTS = fileURLToPath(new URL("../../test-output/screenshots/", import.meta.url));
const CONSOLE_BUILD = fileURLToPath(new URL("../../../daemon/dist/console/index.html", import.meta.url));

export const WIDE = { width: 1280, height: 900 };
export const NARROW = { width: 390, height: 844 };

if (!existsSync(CHROMIUM)) {
  throw new Error(
    `The console tests drive Chromium at ${CHROMIUM}, which is missing: install Debian's package (apt-get install chromium), as .ci/run does.`,
  );
}
if (!existsSync(CONSOLE_BUILD)) throw new Error(`${CONSOLE_BUILD} does not exist: run \`npm run build\` at the repository root first.`);

export interface ConsoleBrowser {
  context: BrowserContext;
  /** A new tab (its own sessionStorage) that records console errors and layout shifts. */
  newPage(): Promise<Page>;
  /** Console errors and uncaught exceptions of every page so far. */
  errors: string[];
  /** The URL of every request any page made (the console must reach only the daemon that serves it). */
  requests: string[];
}

/** Starts Chromium for this test file; it is closed after the file. */
export async function launchBrowser(): Promise<ConsoleBrowser> {
  const profile = mkdtempSync(join(tmpdir(), "wardrik-console-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: WIDE,
  });
  cleanupLater(async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  });
  const errors: string[] = [];
  const requests: string[] = [];
  context.on("request", (r) => requests.push(r.url()));
  // Layout shifts as the browser measures them, for tests that check streaming moves nothing.
  await context.addInitScript({ path: fileURLToPath(new URL("./layout-shifts.js", import.meta.url)) });
  const newPage = async () => {
    const page = await context.newPage();
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(`${page.url()}: ${m.text()}`);
    });
    page.on("pageerror", (e) => errors.push(`${page.url()}: uncaught ${e.message}`));
    return page;
  };
  return { context, newPage, errors, requests };
}

/**
 * Full-page screenshots at 1280 and 390 px wide, named `name-1280.png` and
 * `name-390.png`; leaves the page at 1280. Fails when the page scrolls
 * sideways at either width (readable at 390 px means no scrolling sideways).
 */
export async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  for (const size of [WIDE, NARROW]) {
    await page.setViewportSize(size);
    await page.waitForTimeout(150);
    await page.screenshot({ path: join(SCREENSHOTS, `${name}-${size.width}.png`), fullPage: true });
    await expectNoSidewaysScroll(page, `${name} at ${size.width} px`);
  }
  await page.setViewportSize(WIDE);
}

/** Fails when the page is wider than its window: `document.scrollingElement.scrollWidth > clientWidth`. */
export async function expectNoSidewaysScroll(page: Page, what: string): Promise<void> {
  // An expression, not a function: the tests' tsconfig has no DOM library.
  const { scroll, client } = await page.evaluate<{ scroll: number; client: number }>(
    "({ scroll: document.scrollingElement.scrollWidth, client: document.scrollingElement.clientWidth })",
  );
  if (scroll > client) throw new Error(`${what}: the page is ${scroll} px wide in a ${client} px window and scrolls sideways.`);
}

/** Layout shifts since `since` (the page's clock) that no input caused. */
export async function shiftsSince(page: Page, since: number): Promise<{ value: number; nodes: string[] }[]> {
  // An expression, not a function: the tests' tsconfig has no DOM library (it would clash with Node's fetch types).
  return page.evaluate(`window.__shifts.filter((s) => s.at >= ${since} && !s.recent).map((s) => ({ value: s.value, nodes: s.nodes }))`);
}

/** Whether the element has the keyboard focus. */
export function isFocused(target: Locator | ElementHandle): Promise<boolean> {
  const focused = (el: unknown) => el === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement;
  return "elementHandle" in target ? target.evaluate(focused) : target.evaluate(focused);
}

/**
 * Presses Tab until `target` has the focus (at most `max` times): shows the
 * control can be reached by keyboard, in the page's own order.
 */
export async function tabTo(page: Page, target: Locator, max = 60): Promise<number> {
  const handle = await target.elementHandle();
  if (!handle) throw new Error("tabTo: the target is not on the page");
  for (let i = 1; i <= max; i++) {
    await page.keyboard.press("Tab");
    if (await isFocused(handle)) return i;
  }
  throw new Error(`tabTo: ${max} presses of Tab never reached the target`);
}

/** Opens the console at `url` and signs in with `token`; resolves on the agents list. */
export async function signIn(page: Page, url: string, token: string): Promise<void> {
  await page.goto(url + "/");
  await page.getByLabel("Token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Agents", level: 1 }).waitFor();
}
