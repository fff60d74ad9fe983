import type { Command } from "commander";
import { connected } from "../connect-on-demand.js";
import { examples, json, out } from "../output.js";

export function registerReload(program: Command): void {
  examples(
    program
      .command("reload")
      .option("--json", "print JSON")
      .description(
        "reread agents/ and scripts/: add new files, update edited ones, remove deleted ones; say why an agent is unreadable, and warn about models without an API key and tool patterns that match nothing",
      ),
    "wardrik reload",
    "wardrik reload --json",
  ).action(async (opts: { json?: boolean }) => {
    const r = await (await connected()).reload();
    if (opts.json) return json({ warnings: [], ...r });
    const parts = [`added ${list(r.added)}`, `updated ${list(r.updated)}`, `removed ${list(r.removed)}`];
    if (r.unreadable.length) parts.push(`unreadable ${list(r.unreadable)}`);
    out(`Reloaded agents/ and scripts/: ${parts.join("; ")}.`);
    for (const u of r.unreadable_reasons ?? []) {
      out(`unreadable: ${u.agent}:`);
      for (const line of u.reason.split("\n")) out(`  ${line}`);
    }
    for (const w of r.model_warnings ?? []) out(`warning: ${w.agent}: ${w.reason}`);
    for (const w of r.warnings ?? []) out(`warning: ${w.agent}: tool pattern ${w.pattern} matches nothing: ${w.reason}`);
  });
}

function list(xs: string[]): string {
  return xs.length ? xs.join(", ") : "none";
}
