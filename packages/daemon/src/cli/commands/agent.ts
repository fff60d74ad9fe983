import type { Command } from "commander";
import { agentByName, connect } from "../connect.js";
import { out } from "../output.js";

export function registerAgent(program: Command): void {
  const agent = program.command("agent").description("inspect and control one agent");
  agent
    .command("show")
    .argument("<name>")
    .option("--json", "print JSON")
    .action(async (name: string, opts: { json?: boolean }) => {
      const client = connect();
      const d = await client.getAgent((await agentByName(client, name)).id);
      if (opts.json) return out(JSON.stringify(d, null, 2));
      out(`${d.name} (${d.id})  ${d.status}`);
      if (d.reason) out(`  unreadable: ${d.reason}`);
      out(`  ${d.description}`);
      if (d.file) out(`  file: ${d.file}`);
      out(`  model: ${d.model ?? "(config default)"}   policy: ${d.policy ?? "(default)"}`);
      out(`  tools: ${d.tools.join(", ") || "none"}`);
      out(`  limits: max_iterations ${d.max_iterations}, timeout ${d.timeout} s, retries ${d.retries}, idle_timeout ${d.idle_timeout}`);
      const caps = [
        d.spend.per_turn_cap_usd !== undefined ? `$${d.spend.per_turn_cap_usd}/turn` : "",
        d.spend.per_day_cap_usd !== undefined ? `$${d.spend.per_day_cap_usd}/day` : "",
      ].filter(Boolean);
      out(
        `  spend today: $${d.spend.today_usd.toFixed(4)} (model $${d.spend.model_usd.toFixed(4)}, tools $${d.spend.tools_usd.toFixed(4)})${caps.length ? `; caps ${caps.join(", ")}` : ""}`,
      );
      for (const s of d.tool_sources) out(`  tool source ${s.name}: ${s.status}${s.reason ? ` (${s.reason})` : ""}`);
      if (d.conversations.length) out(`  conversations: ${d.conversations.map((c) => `${c.key} (${c.status})`).join(", ")}`);
      for (const c of d.waiting_calls)
        out(`  waiting: ${c.call} ${c.tool}${c.reason ? ` — ${c.reason}` : ""}\n    approve: wardrik approve ${d.name} ${c.call}`);
    });
  agent
    .command("cancel")
    .argument("<name>")
    .option("--conversation <id>", "only this conversation")
    .description("stop the running turn and drop queued messages")
    .action(async (name: string, opts: { conversation?: string }) => {
      const client = connect();
      const r = await client.cancel((await agentByName(client, name)).id, opts.conversation);
      out(`Cancelled ${r.cancelled.length} turn(s), dropped ${r.dropped} queued message(s).`);
    });
  agent
    .command("kill")
    .argument("<name>")
    .argument("<call>", "the call ID (call_...)")
    .description("stop one tool call; the model is told and the turn goes on")
    .action(async (name: string, call: string) => {
      const client = connect();
      const r = await client.kill((await agentByName(client, name)).id, call);
      out(`Stopping ${r.call} (${r.tool}).`);
    });
  agent
    .command("clear")
    .argument("<name>")
    .option("--conversation <id>", "only this conversation")
    .description("empty the history (the event record stays)")
    .action(async (name: string, opts: { conversation?: string }) => {
      const client = connect();
      const r = await client.clear((await agentByName(client, name)).id, opts.conversation);
      out(`Cleared ${r.cleared.length ? r.cleared.join(", ") : "nothing (no conversations)"}.`);
    });
  agent
    .command("rm")
    .argument("<name>")
    .description("remove an agent created through the HTTP API")
    .action(async (name: string) => {
      const client = connect();
      await client.removeAgent((await agentByName(client, name)).id);
      out(`Removed ${name}.`);
    });
}
