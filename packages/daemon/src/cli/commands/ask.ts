import type { Command } from "commander";
import { shortType } from "@wardrik/protocol";
import { agentByName, connect } from "../connect.js";
import { err, out } from "../output.js";

interface AskOptions {
  conversation: string;
  wait: boolean;
  json?: boolean;
}

export function registerAsk(program: Command): void {
  program
    .command("ask")
    .argument("<name>", "agent name, or org/name")
    .argument("<message>", "the message")
    .option("--conversation <id>", "conversation to use", "main")
    .option("--no-wait", "only queue the message")
    .option("--json", "print the result as JSON")
    .description("send a message and wait for the reply (progress on stderr, reply on stdout)")
    .action(async (name: string, message: string, opts: AskOptions) => {
      const code = await ask(name, message, opts);
      process.exitCode = code;
    });
}

async function ask(name: string, message: string, opts: AskOptions): Promise<number> {
  const client = connect();
  const agent = await agentByName(client, name);
  const queued = await client.sendMessage(agent.id, message, opts.conversation);
  if (!opts.wait) {
    if (opts.json) out(JSON.stringify({ queued: true, ...queued }));
    else err(`Queued ${queued.message} for ${agent.name} (conversation ${queued.conversation}).`);
    return 0;
  }
  const ac = new AbortController();
  process.once("SIGINT", () => ac.abort());
  let run: string | undefined;
  let streamed = false;
  for await (const e of client.follow(agent.id, {
    after: queued.seq - 1,
    signal: ac.signal,
    onDelta: (r, text, reset) => {
      if (r === run && reset) {
        if (streamed) process.stdout.write("\n");
        streamed = false;
        err("(the model call failed and is being retried; its partial reply above is void)");
      } else if (r === run && !opts.json) {
        streamed = true;
        process.stdout.write(text);
      }
    },
  })) {
    const type = shortType(e.type);
    const data = e.data as Record<string, unknown>;
    if (!run) {
      if (type === "turn.started" && Array.isArray(data.messages) && data.messages.includes(queued.message)) run = e.run;
      else if (type === "messages.dropped") {
        err("The message was dropped: the agent was cancelled before it started.");
        return 1;
      }
      continue;
    }
    if (e.run !== run) continue;
    if (type === "model.replied" && streamed && Number(data.tool_calls) > 0) {
      process.stdout.write("\n");
      streamed = false;
    }
    if (type === "call.started") err(`→ ${String(data.tool)} (${String(data.call)})`);
    else if (type === "call.failed") err(`✗ ${String(data.tool)}: ${String(data.error)}`);
    else if (type === "call.killed") err(`✗ ${String(data.tool)} stopped`);
    else if (type === "call.decided" && data.decision === "deny") err(`✗ ${String(data.tool)} denied: ${String(data.reason)}`);
    else if (type === "approval.requested") {
      err(`⏸ ${String(data.tool)} waits for approval (${String(data.reason)})`);
      err(`   approve: wardrik approve ${agent.name} ${String(data.call)}`);
      err(`   deny:    wardrik deny ${agent.name} ${String(data.call)} --reason "..."`);
    } else if (type === "approval.granted") err(`✓ ${String(data.call)} approved`);
    else if (type === "approval.denied") err(`✗ ${String(data.call)} denied: ${String(data.reason)}`);
    else if (type === "budget.exceeded") err(`✗ budget exceeded: ${String(data.reason)}`);
    else if (type === "turn.completed" || type === "turn.failed" || type === "turn.cancelled") {
      const status = type.slice("turn.".length);
      if (opts.json) {
        const turn = await client.getTurn(agent.id, run);
        out(JSON.stringify(turn, null, 2));
      } else if (status === "completed") {
        if (streamed) process.stdout.write("\n");
        else out(String(data.reply ?? ""));
      } else {
        if (streamed) process.stdout.write("\n");
        err(`The turn ${status}: ${String(data.reason ?? "")}`);
      }
      return status === "completed" ? 0 : 1;
    }
  }
  err("Stopped waiting; the turn goes on in the daemon.");
  return 1;
}
