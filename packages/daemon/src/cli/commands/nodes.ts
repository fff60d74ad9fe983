import type { Command } from "commander";
import { connected } from "../connect-on-demand.js";
import { examples, json, out } from "../output.js";

export function registerNodes(program: Command): void {
  examples(
    program
      .command("nodes")
      .description("the daemons sharing the database: address, start time, last heartbeat, and the agents each drives")
      .option("--json", "print JSON"),
    "wardrik nodes",
    "wardrik nodes --json",
  ).action(async (opts: { json?: boolean }) => {
    const { nodes } = await (await connected()).listNodes();
    if (opts.json) return json({ nodes });
    if (nodes.length === 0) return out("No node has said it lives yet.");
    for (const n of nodes) {
      const state = n.alive ? "alive" : "silent";
      out(`${n.name}  ${n.url}  ${state}  started ${n.started_at}  last heartbeat ${n.last_heartbeat}`);
      out(`  agents: ${n.agents.length === 0 ? "none" : n.agents.join(", ")}`);
    }
  });
}
