import type { Command } from "commander";
import { connect } from "../connect.js";
import { out, UsageError } from "../output.js";

export function registerLs(program: Command): void {
  program
    .command("ls")
    .argument("[filter]", "attention: only parked and unreadable agents")
    .option("--json", "print JSON")
    .description("list agents and their status")
    .action(async (filter: string | undefined, opts: { json?: boolean }) => {
      if (filter !== undefined && filter !== "attention") throw new UsageError(`unknown filter "${filter}"; the only filter is attention`);
      let agents = await connect().listAgents();
      if (filter === "attention") agents = agents.filter((a) => a.status === "parked" || a.status === "unreadable");
      if (opts.json) return out(JSON.stringify(agents, null, 2));
      if (agents.length === 0) return out(filter ? "Nothing needs attention." : "No agents.");
      const w = Math.max(4, ...agents.map((a) => a.name.length));
      out(`${"NAME".padEnd(w)}  ${"STATUS".padEnd(10)}  DESCRIPTION`);
      for (const a of agents)
        out(`${a.name.padEnd(w)}  ${a.status.padEnd(10)}  ${a.status === "unreadable" ? (a.reason ?? "") : a.description}`);
    });
}
