import type { Command } from "commander";
import { connected } from "../connect-on-demand.js";
import { err, examples, json, out } from "../output.js";

export function registerConsole(program: Command): void {
  examples(
    program
      .command("console")
      .description("print a one-time link that opens the web console signed in (and open it, on a desktop)")
      .option("--no-open", "only print the link")
      .option("--json", "print JSON"),
    "wardrik console",
    "wardrik console --no-open",
  ).action(async (opts: { open: boolean; json?: boolean }) => {
    const link = await (await connected()).createConsoleLink();
    const opened = opts.open && (await (await import("../open-browser.js")).openInBrowser(link.url));
    if (opts.json) return json({ ...link, opened });
    out(link.url);
    const until = new Date(link.expires_at).toLocaleTimeString();
    err(`${opened ? "Opened the console in your browser. " : ""}The link signs in once, until ${until}; it holds no token.`);
  });
}
