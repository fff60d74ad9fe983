import type { Command } from "commander";
import { connect } from "../connect.js";
import { out } from "../output.js";

export function registerReload(program: Command): void {
  program
    .command("reload")
    .description("reread agents/: add new files, update edited ones, remove deleted ones")
    .action(async () => {
      const r = await connect().reload();
      const parts = [`added ${list(r.added)}`, `updated ${list(r.updated)}`, `removed ${list(r.removed)}`];
      if (r.unreadable.length) parts.push(`unreadable ${list(r.unreadable)} (see wardrik ls attention)`);
      out(`Reloaded: ${parts.join("; ")}.`);
    });
}

function list(xs: string[]): string {
  return xs.length ? xs.join(", ") : "none";
}
