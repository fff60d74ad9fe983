import type { Command } from "commander";
import { agentByName, connect } from "../connect.js";
import { out } from "../output.js";

export function registerApprovals(program: Command): void {
  program
    .command("approve")
    .argument("<name>")
    .argument("<call>", "the call ID (call_...)")
    .description("approve a call that waits for a person")
    .action(async (name: string, call: string) => {
      const client = connect();
      const r = await client.approve((await agentByName(client, name)).id, call);
      out(`Approved ${r.call} (${r.tool}).`);
    });
  program
    .command("deny")
    .argument("<name>")
    .argument("<call>", "the call ID (call_...)")
    .option("--reason <text>", "why; the model is told")
    .description("refuse a call that waits for a person")
    .action(async (name: string, call: string, opts: { reason?: string }) => {
      const client = connect();
      const r = await client.deny((await agentByName(client, name)).id, call, opts.reason);
      out(`Denied ${r.call} (${r.tool}).`);
    });
}
