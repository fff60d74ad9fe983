import type { Command } from "commander";
import type { WardrikCloudEvent } from "@wardrik/protocol";
import { agentNamed } from "../connect-on-demand.js";
import { examples, out } from "../output.js";

export function registerEvents(program: Command): void {
  examples(
    program
      .command("events")
      .argument("<name>", "agent name, or org/name")
      .option("--follow", "keep printing new events")
      .option("--after <seq>", "only events after this sequence number", (v) => Number.parseInt(v, 10), 0)
      .option("--json", "print CloudEvents JSON, one per line")
      .description("print an agent's events"),
    "wardrik events triage",
    "wardrik events triage --follow --json",
  ).action(async (name: string, opts: { follow?: boolean; after: number; json?: boolean }) => {
    const { agent: a, client } = await agentNamed(name);
    const { formatEvent } = await import("../format-event.js");
    const line = (e: WardrikCloudEvent) => (opts.json ? JSON.stringify(e) : formatEvent(e));
    const print = (e: WardrikCloudEvent) => out(line(e));
    if (opts.follow) {
      const ac = new AbortController();
      process.once("SIGINT", () => ac.abort());
      for await (const e of client.follow(a.id, { after: opts.after, signal: ac.signal })) print(e);
      return;
    }
    let after = opts.after;
    for (;;) {
      const page = await client.events(a.id, { after, limit: 1000 });
      // A page in one write: each write to a pipe is a system call and a pass through Node's stream.
      if (page.events.length > 0) out(page.events.map(line).join("\n"));
      if (page.events.length < 1000) break;
      after = page.events[page.events.length - 1]!.seq;
    }
  });
}
