import type { Command } from "commander";
import { agentByName, connect } from "../connect.js";
import { examples, json, out } from "../output.js";

export function registerApprovals(program: Command): void {
  examples(
    program
      .command("approve")
      .argument("<name>", "agent name, or org/name")
      .argument("<call>", "the call ID (call_...), as wardrik ask or wardrik agent show prints it")
      .option("--json", "print JSON")
      .description("approve a call that waits for a person; it runs"),
    "wardrik approve triage call_01JF8X5RQ2M3V9ZK0B7Y4T6WHN",
  ).action(async (name: string, call: string, opts: { json?: boolean }) => {
    const { agent, client } = await agentByName(connect(), name);
    const r = await client.decide(agent.id, call, "approve");
    if (opts.json) return json(r);
    out(`Approved ${r.call} (${r.tool}).`);
  });
  examples(
    program
      .command("deny")
      .argument("<name>", "agent name, or org/name")
      .argument("<call>", "the call ID (call_...)")
      .option("--reason <text>", "why; the model is told")
      .option("--json", "print JSON")
      .description("refuse a call that waits for a person; the model is told why"),
    'wardrik deny triage call_01JF8X5RQ2M3V9ZK0B7Y4T6WHN --reason "Not on a Friday"',
  ).action(async (name: string, call: string, opts: { reason?: string; json?: boolean }) => {
    const { agent, client } = await agentByName(connect(), name);
    const r = await client.decide(agent.id, call, "deny", opts.reason);
    if (opts.json) return json(r);
    out(`Denied ${r.call} (${r.tool}).`);
  });
}
