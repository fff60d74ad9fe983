import type { Command } from "commander";
import { agentNamed } from "../connect-on-demand.js";
import { examples, json, out } from "../output.js";

export function registerHistory(program: Command): void {
  examples(
    program
      .command("history")
      .argument("<name>", "agent name, or org/name")
      .option("--conversation <id>", "conversation", "main")
      .option("--json", "print JSON")
      .description("print a conversation's full history"),
    "wardrik history triage",
    "wardrik history triage --conversation C1 --json",
  ).action(async (name: string, opts: { conversation: string; json?: boolean }) => {
    const { agent, client } = await agentNamed(name);
    const h = await client.history(agent.id, opts.conversation);
    if (opts.json) return json(h);
    // In one write (as events does): each write to a pipe is a system call and a pass through Node's stream.
    if (h.messages.length > 0) out(h.messages.map((m) => `#${m.seq} ${m.role}: ${historyText(m.content)}`).join("\n"));
  });
}

function historyText(content: unknown): string {
  const m = content as {
    role?: string;
    text?: string;
    toolCalls?: { tool: string; args: unknown; original_args?: unknown; edited?: boolean }[];
    results?: { tool: string; output: unknown; isError: boolean }[];
  };
  if (m.results) return m.results.map((r) => `${r.tool} ${r.isError ? "error" : "->"} ${JSON.stringify(r.output)}`).join("; ");
  // A call a person edited at approval shows what it ran with, and what the model had asked for.
  const call = (c: NonNullable<typeof m.toolCalls>[number]) =>
    `${c.tool} ${JSON.stringify(c.args)}${c.edited ? ` (edited at approval; the model asked for ${JSON.stringify(c.original_args)})` : ""}`;
  const calls = m.toolCalls?.length ? ` [calls ${m.toolCalls.map(call).join(", ")}]` : "";
  return `${m.text ?? ""}${calls}`;
}
