import type { Command } from "commander";
import { agentByName, connect } from "../connect.js";
import { out } from "../output.js";

export function registerHistory(program: Command): void {
  program
    .command("history")
    .argument("<name>")
    .option("--conversation <id>", "conversation", "main")
    .option("--json", "print JSON")
    .description("print a conversation's full history")
    .action(async (name: string, opts: { conversation: string; json?: boolean }) => {
      const client = connect();
      const h = await client.history((await agentByName(client, name)).id, opts.conversation);
      if (opts.json) return out(JSON.stringify(h, null, 2));
      for (const m of h.messages) out(`#${m.seq} ${m.role}: ${historyText(m.content)}`);
    });
}

function historyText(content: unknown): string {
  const m = content as {
    role?: string;
    text?: string;
    toolCalls?: { tool: string; args: unknown }[];
    results?: { tool: string; output: unknown; isError: boolean }[];
  };
  if (m.results) return m.results.map((r) => `${r.tool} ${r.isError ? "error" : "->"} ${JSON.stringify(r.output)}`).join("; ");
  const calls = m.toolCalls?.length ? ` [calls ${m.toolCalls.map((c) => `${c.tool} ${JSON.stringify(c.args)}`).join(", ")}]` : "";
  return `${m.text ?? ""}${calls}`;
}
