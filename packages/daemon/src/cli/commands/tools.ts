import type { Command } from "commander";
import type { AgentTools } from "@wardrik/protocol";
import { agentNamed } from "../connect-on-demand.js";
import { examples, json, out } from "../output.js";

export function registerTools(program: Command): void {
  examples(
    program
      .command("tools")
      .argument("<name>", "agent name, or org/name")
      .option("--json", "print JSON")
      .description(
        "what an agent can call: the names policies use, titles, the names the model sees, source, read-only/idempotent, the workers serving each; and patterns that match nothing",
      ),
    "wardrik tools triage",
    "wardrik tools acme/triage --json",
  ).action(async (name: string, opts: { json?: boolean }) => {
    const { agent, client } = await agentNamed(name);
    const t = await client.agentTools(agent.id);
    if (opts.json) return json(t);
    printTools(t);
  });
}

function printTools(t: AgentTools): void {
  if (t.patterns.length === 0) return out("The agent has no tools (its file lists no tool patterns).");
  out(`patterns: ${t.patterns.join(", ")}`);
  if (t.tools.length === 0) out("No tool matches right now.");
  else {
    const rows = [
      ["NAME (policies)", "TITLE", "MODEL SEES", "SOURCE", "READ-ONLY", "IDEMPOTENT", "SERVED BY"],
      ...t.tools.map((x) => [
        x.name,
        x.title ?? "-",
        x.model_name,
        x.source === "mcp" ? `mcp ${x.namespace}` : x.source,
        yes(x.read_only),
        yes(x.idempotent),
        // Worker tools: each worker connection serving it (calls are spread over them).
        x.served_by === undefined ? "-" : x.served_by.join(", ") || "no worker connected",
      ]),
    ];
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    for (const r of rows) out(r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  "));
  }
  for (const u of t.unmatched) out(`${u.expected ? "note" : "warning"}: ${u.pattern} matches nothing: ${u.reason}`);
  for (const s of t.skipped) out(`skipped: ${s.namespace}/${s.tool}: ${s.reason}`);
}

function yes(b: boolean): string {
  return b ? "yes" : "no";
}
