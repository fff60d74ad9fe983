import { Command, CommanderError, Option } from "commander";
import { WardrikError, shortType, type WardrikCloudEvent } from "@wardrik/protocol";
import { VERSION } from "../version.js";
import { agentByName, connect } from "./connect.js";
import { initProject } from "./init-project.js";
import { formatEvent } from "./format-event.js";
import { registerSchemaCommand } from "./commands/schema.js";
import { DEFAULT_LOG_THRESHOLD, LOG_LEVEL_ENV, LOG_THRESHOLDS, type LogThreshold } from "../log/log-level.js";
import { registerSecretRotate } from "./commands/secret-rotate.js";

/** Exit codes: 0 done, 1 the operation failed (or the turn failed / was cancelled), 2 usage. */
export async function main(argv: string[]): Promise<void> {
  // `wardrik events NAME | head`: a closed pipe ends the command quietly.
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(0);
  });
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version" || err.code === "commander.help") process.exit(0);
      process.exit(2);
    }
    if (err instanceof UsageError) {
      process.stderr.write(`wardrik: ${err.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`wardrik: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}

class UsageError extends Error {}

const out = (s: string): void => void process.stdout.write(s + "\n");
const err = (s: string): void => void process.stderr.write(s + "\n");

export function buildProgram(): Command {
  // Set before the subcommands exist: commander copies it to each, so usage errors exit 2.
  const program = new Command("wardrik").description("Run governed, durable LLM agents").version(VERSION).exitOverride();

  program
    .command("init")
    .argument("<dir>", "directory to create the project in")
    .description("create a project: config.yaml, an example agent, a policy, a worker file, an admin token")
    .action((dir: string) => {
      const { dir: where, files } = initProject(dir);
      out(`Created a Wardrik project in ${where}:`);
      for (const f of files) out(`  ${f}`);
      out(`\nNext: cd ${dir} && wardrik daemon, then in another terminal: wardrik ask helper "Hello"`);
    });

  program
    .command("daemon")
    .description("run the daemon for the project in the current directory (foreground)")
    .option("--port <port>", "listen on this port instead of config.yaml's", (v) => parsePort(v))
    .addOption(new Option("--log-level <level>", "the least severe log lines to write").choices(LOG_THRESHOLDS).env(LOG_LEVEL_ENV))
    .action(async (opts: { port?: number; logLevel?: LogThreshold }) => {
      // Loaded here so other commands start without the daemon's dependencies.
      const { startDaemon } = await import("../daemon.js");
      const { runUntilSignalled } = await import("../daemon-signals.js");
      const { createLogger, routeProcessOutput } = await import("../log/index.js");
      // Everything the daemon says goes through its logger: JSON lines unless stderr is a terminal.
      const log = createLogger({ level: opts.logLevel ?? DEFAULT_LOG_THRESHOLD });
      routeProcessOutput(log);
      const daemon = await startDaemon(process.cwd(), { log, ...(opts.port !== undefined ? { port: opts.port } : {}) }).catch(
        (error: unknown) => {
          log("error", error instanceof Error ? error.message : String(error));
          process.exit(1);
        },
      );
      // Everything durable is closed (or the deadline passed); do not wait for stray timers or sockets.
      process.exit(await runUntilSignalled(() => daemon.close(), log));
    });

  program
    .command("reload")
    .description("reread agents/: add new files, update edited ones, remove deleted ones")
    .action(async () => {
      const r = await connect().reload();
      const parts = [`added ${list(r.added)}`, `updated ${list(r.updated)}`, `removed ${list(r.removed)}`];
      if (r.unreadable.length) parts.push(`unreadable ${list(r.unreadable)} (see wardrik ls attention)`);
      out(`Reloaded: ${parts.join("; ")}.`);
    });

  program
    .command("ask")
    .argument("<name>", "agent name, or org/name")
    .argument("<message>", "the message")
    .option("--conversation <id>", "conversation to use", "main")
    .option("--no-wait", "only queue the message")
    .option("--json", "print the result as JSON")
    .description("send a message and wait for the reply (progress on stderr, reply on stdout)")
    .action(async (name: string, message: string, opts: { conversation: string; wait: boolean; json?: boolean }) => {
      const code = await ask(name, message, opts);
      process.exitCode = code;
    });

  const ls = program
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
  void ls;

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

  program
    .command("events")
    .argument("<name>")
    .option("--follow", "keep printing new events")
    .option("--after <seq>", "only events after this sequence number", (v) => Number.parseInt(v, 10), 0)
    .option("--json", "print CloudEvents JSON, one per line")
    .description("print an agent's events")
    .action(async (name: string, opts: { follow?: boolean; after: number; json?: boolean }) => {
      const client = connect();
      const a = await agentByName(client, name);
      const print = (e: WardrikCloudEvent) => out(opts.json ? JSON.stringify(e) : formatEvent(e));
      if (opts.follow) {
        const ac = new AbortController();
        process.once("SIGINT", () => ac.abort());
        for await (const e of client.follow(a.id, { after: opts.after, signal: ac.signal })) print(e);
        return;
      }
      let after = opts.after;
      for (;;) {
        const page = await client.events(a.id, after, 1000);
        for (const e of page.events) print(e);
        if (page.events.length < 1000) break;
        after = page.events[page.events.length - 1]!.seq;
      }
    });

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

  program
    .command("token")
    .description("create a bearer token for an org (prints it once)")
    .argument("<org>", "the org the token belongs to")
    .option("--name <name>", "a label for the token")
    .action(async (org: string, opts: { name?: string }) => {
      const t = await connect().createToken(org, opts.name);
      out(t.token);
      err(`Created a token for org ${t.org} ("${t.name}"). Use it as WARDRIK_TOKEN; it is not shown again.`);
    });

  const secret = program.command("secret").description("secrets for ${secret:NAME} in config.yaml (encrypted in the database)");
  secret
    .command("set")
    .argument("<name>")
    .description("store a secret; the value is read from standard input, never from the command line")
    .action(async (name: string) => {
      const value = (await readStdin()).replace(/\r?\n$/, "");
      if (!value) throw new UsageError("no value on standard input; try: wardrik secret set NAME < file, or type it and press Ctrl-D");
      await connect().setSecret(name, value);
      out(`Stored secret ${name}. Restart the daemon for config.yaml to use it.`);
    });
  secret
    .command("ls")
    .description("list the names of stored secrets")
    .action(async () => {
      const names = await connect().listSecrets();
      out(names.length ? names.join("\n") : "No secrets.");
    });
  registerSecretRotate(secret);

  registerSchemaCommand(program);
  program.addOption(new Option("--debug").hideHelp());
  return program;
}

async function ask(name: string, message: string, opts: { conversation: string; wait: boolean; json?: boolean }): Promise<number> {
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

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write("Value (end with Ctrl-D): ");
  let text = "";
  for await (const chunk of process.stdin) text += String(chunk);
  return text;
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

function list(xs: string[]): string {
  return xs.length ? xs.join(", ") : "none";
}

function parsePort(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`--port must be a port number, got ${v}`);
  return n;
}

export { WardrikError };
