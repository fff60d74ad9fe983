/**
 * What `wardrik ask` does once its arguments are read (commands/ask.ts defines
 * the command and loads this when it runs): send the message, follow its turn,
 * print the reply; the exit code is the turn's outcome.
 */
import { randomUUID } from "node:crypto";
import type { ModelRetry, WardrikCloudEvent } from "@wardrik/protocol";
import { typedEvent } from "@wardrik/protocol/base";
import { AskProgress, summaryLine, type TurnUsage } from "./ask-progress.js";
import { agentByName, connect, type AgentRef } from "./connect.js";
import { formatArgs } from "./format-args.js";
import { err, out } from "./output.js";

export interface AskOptions {
  conversation: string;
  wait: boolean;
  json?: boolean;
  retryFor: number;
}

/** How often a long wait for the model looks at the agent's tool sources (an MCP server starting). */
const SOURCE_POLL_MS = 2000;
/** Runs whose early text is kept while the turn of the message is not known yet (other conversations may stream too). */
const MAX_EARLY_RUNS = 16;

export async function ask(name: string, message: string, opts: AskOptions): Promise<number> {
  const started = Date.now();
  const progress = new AskProgress(process.stderr);
  const base = connect();
  base.onRetry = (_attempt, e) => progress.waiting(`no answer from the daemon (${e.message}); retrying for up to ${opts.retryFor} s`);
  // One deadline for every request until the message is accepted, however the time is spent.
  const retry = { deadline: started + opts.retryFor * 1000 };
  const target = await agentByName(base, name, retry);
  const { agent, client } = target;
  // One key for every attempt: a retry after a lost answer can never queue the message twice.
  const send = () => client.sendMessage(agent.id, message, opts.conversation, { idempotencyKey: randomUUID(), ...retry });
  if (!opts.wait) {
    const queued = await send();
    progress.stop();
    if (opts.json) out(JSON.stringify({ queued: true, ...queued }));
    else err(`Queued ${queued.message} for ${target.ref} (conversation ${queued.conversation}).`);
    return 0;
  }

  const turn = new TurnWatch(target, progress, opts.json === true);
  const ac = new AbortController();
  process.once("SIGINT", () => ac.abort());
  // Follow first, send second: reply text is streamed live and never stored,
  // so a stream opened after the model started would miss its first words.
  // The conversation's events only: the daemon does not send this command every other conversation's turns.
  const { last_seq } = await client.events(agent.id, { after: 0, limit: 1 }, retry);
  let live: () => void = () => undefined;
  const following = new Promise<void>((resolve) => (live = resolve));
  const stream = client.follow(agent.id, {
    after: last_seq,
    conversation: opts.conversation,
    signal: ac.signal,
    onDelta: (r, t, reset, retry) => turn.delta(r, t, reset, retry),
    onState: (state) => state === "live" && live(),
  });
  const events = stream[Symbol.asyncIterator]();
  // The stream's answer proves the daemon is streaming to us (it subscribes before it answers); the first event may come later.
  let first: Promise<IteratorResult<WardrikCloudEvent>> | undefined = events.next();
  await Promise.race([following, first]);
  const queued = await send();
  turn.expect(queued.message, queued.conversation);
  const poll = setInterval(() => void turn.lookAtSources(), SOURCE_POLL_MS);
  poll.unref();
  try {
    // Mostly the turn starts at once: worth a status line, not a line of its own.
    progress.waiting("queued; waiting for the turn to start", { quiet: true });
    for (;;) {
      const next = await (first ?? events.next());
      first = undefined;
      if (next.done) break;
      const end = await turn.event(next.value);
      if (end) {
        progress.stop();
        err(summaryLine(end.outcome, Date.now() - started, turn.usage));
        return end.code;
      }
    }
  } finally {
    clearInterval(poll);
    progress.stop();
    ac.abort();
  }
  err("Stopped waiting; the turn goes on in the daemon.");
  err(summaryLine("stopped waiting", Date.now() - started, turn.usage));
  return 1;
}

/** Follows one message's turn: progress, approvals, the streamed reply, the end. */
class TurnWatch {
  run: string | undefined;
  /** Reply text printed and not yet ended with a newline. */
  private streamed = false;
  private readonly running = new Map<string, string>();
  private model = "unknown";
  private waitingOnModel = false;
  readonly usage: TurnUsage = { modelCalls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 };
  private message: string | undefined;
  private conversation: string | undefined;
  /** Text of runs not known yet: the daemon may send a reply's first words before its turn.started. */
  private readonly early = new Map<string, string>();

  constructor(
    private readonly target: AgentRef,
    private readonly progress: AskProgress,
    private readonly json: boolean,
  ) {}

  /** The message whose turn to follow, once the daemon has accepted it. */
  expect(message: string, conversation: string): void {
    this.message = message;
    this.conversation = conversation;
  }

  delta(run: string, text: string, reset?: boolean, retry?: ModelRetry): void {
    if (this.run === undefined) {
      if (reset) this.early.delete(run);
      else if (this.early.size < MAX_EARLY_RUNS || this.early.has(run)) this.early.set(run, (this.early.get(run) ?? "") + text);
      return;
    }
    if (run !== this.run) return;
    if (reset) {
      // Only text that was printed needs taking back.
      if (this.streamed) {
        this.endText();
        this.progress.line("(the model call failed and is being retried; its partial reply above is void)");
      }
      const why = retry ? `${retry.error}; retrying in ${(retry.delay_ms / 1000).toFixed(1)} s (attempt ${retry.attempt + 1})` : "retrying";
      this.progress.waiting(`the model call failed: ${why} (${this.model})`);
      return;
    }
    if (this.json || text === "") return;
    if (!this.streamed) this.progress.streaming();
    this.streamed = true;
    this.waitingOnModel = false;
    process.stdout.write(text);
  }

  private endText(): void {
    if (this.streamed) process.stdout.write("\n");
    this.streamed = false;
  }

  private showRunning(): void {
    this.waitingOnModel = false;
    if (this.running.size > 0) this.progress.waiting(`running ${[...new Set(this.running.values())].join(", ")}`, { quiet: true });
  }

  /** An MCP server that starts before the model call shows as such. */
  async lookAtSources(): Promise<void> {
    if (!this.waitingOnModel) return;
    try {
      const d = await this.target.client.getAgent(this.target.agent.id);
      const starting = d.tool_sources.filter((s) => s.status === "starting").map((s) => s.name);
      if (!this.waitingOnModel) return;
      if (starting.length > 0) this.progress.waiting(`starting MCP server ${starting.join(", ")}`);
      else this.progress.waiting(`waiting for the model (${this.model})`);
    } catch {
      // Only a hint: the event stream says what matters.
    }
  }

  /** Handles one event; returns how the command ends when the turn has ended. */
  async event(e: WardrikCloudEvent): Promise<{ code: number; outcome: string } | undefined> {
    // A type this CLI does not know (from a newer daemon) changes nothing here.
    const ev = typedEvent(e);
    if (!ev) return undefined;
    const { ref } = this.target;
    if (!this.run) {
      if (ev.type === "turn.started" && this.message !== undefined && ev.data.messages.includes(this.message)) {
        this.run = e.run;
        const early = this.early.get(this.run ?? "");
        this.early.clear();
        if (early) this.delta(this.run!, early);
      }
      // The event names the conversation it dropped from (none: all of them), not the messages.
      else if (ev.type === "messages.dropped" && (ev.data.conversation === undefined || ev.data.conversation === this.conversation)) {
        this.progress.line("The message was dropped: the agent was cancelled before it started.");
        return { code: 1, outcome: "✗ dropped" };
      }
      return undefined;
    }
    if (e.run !== this.run) return undefined;
    switch (ev.type) {
      case "model.called":
        if (typeof ev.data.model === "string") this.model = ev.data.model;
        this.waitingOnModel = true;
        this.progress.waiting(`waiting for the model (${this.model})`);
        break;
      case "model.replied":
        this.usage.modelCalls += 1;
        this.usage.inputTokens += ev.data.input_tokens || 0;
        this.usage.outputTokens += ev.data.output_tokens || 0;
        this.usage.costUsd += ev.data.cost_usd || 0;
        this.waitingOnModel = false;
        if (ev.data.tool_calls > 0) this.endText();
        break;
      case "call.started":
        this.running.set(ev.data.call, ev.data.tool);
        this.progress.line(`→ ${ev.data.tool} (${ev.data.call})${ev.data.child ? ` runs as ${ev.data.child.run}` : ""}`);
        this.showRunning();
        break;
      case "call.completed":
        this.running.delete(ev.data.call);
        this.showRunning();
        break;
      case "call.failed":
        this.running.delete(ev.data.call);
        this.progress.line(`✗ ${ev.data.tool}: ${ev.data.error}`);
        this.showRunning();
        break;
      case "call.killed":
        this.running.delete(ev.data.call);
        this.progress.line(`✗ ${ev.data.tool} stopped`);
        this.showRunning();
        break;
      case "call.timed_out":
        this.running.delete(ev.data.call);
        this.progress.line(`✗ ${ev.data.tool} timed out after ${ev.data.timeout_s} s${ev.data.will_retry ? "; it is tried again" : ""}`);
        this.showRunning();
        break;
      case "call.decided":
        if (ev.data.decision === "deny") this.progress.line(`✗ ${ev.data.tool} denied: ${ev.data.reason}`);
        break;
      case "approval.requested": {
        const { call, tool, rule } = ev.data;
        this.progress.line(
          [
            `⏸ ${tool} waits for approval: ${ev.data.reason}${rule ? ` (rule: ${rule})` : ""}`,
            `   call:    ${call}`,
            `   args:    ${formatArgs(ev.data.args, "            ")}`,
            `   approve: wardrik approve ${ref} ${call}`,
            `   deny:    wardrik deny ${ref} ${call} --reason "..."`,
          ].join("\n"),
        );
        this.progress.waiting(`waiting for approval of ${tool} (${call})`, { quiet: true });
        break;
      }
      case "approval.granted": {
        const { call, by, args, original_args } = ev.data;
        const edited =
          args !== undefined ? ` with edited arguments ${JSON.stringify(args)} (the model asked for ${JSON.stringify(original_args)})` : "";
        this.progress.line(`✓ ${call} approved${by ? ` by ${by}` : ""}${edited}`);
        break;
      }
      case "approval.denied":
        this.progress.line(`✗ ${ev.data.call} denied${ev.data.by ? ` by ${ev.data.by}` : ""}: ${ev.data.reason}`);
        break;
      case "question.asked": {
        const { call, question, choices } = ev.data;
        this.progress.line(
          [
            `? ${question}`,
            ...(choices ? [`   choices: ${choices.join(" | ")}`] : []),
            `   answer:  wardrik answer ${ref} ${call} "..."`,
          ].join("\n"),
        );
        this.progress.waiting(`waiting for an answer (${call})`, { quiet: true });
        break;
      }
      case "question.answered":
        this.progress.line(`✓ answered${ev.data.by ? ` by ${ev.data.by}` : ""}: ${ev.data.answer}`);
        break;
      case "output.rejected":
        // The streamed reply above is not the answer: say so before the repaired one streams.
        this.endText();
        this.progress.line(`✗ the reply does not fit the output schema: ${ev.data.problems.join("; ")}`);
        break;
      case "budget.exceeded":
        this.progress.line(`✗ budget exceeded: ${ev.data.reason}`);
        break;
      case "turn.completed":
        return this.end("completed", ev.data.reply);
      case "turn.failed":
      case "turn.cancelled":
        return this.end(ev.type.slice("turn.".length), ev.data.reason);
    }
    return undefined;
  }

  /** `text` is the reply of a completed turn, else the reason it ended. */
  private async end(status: string, text: string): Promise<{ code: number; outcome: string }> {
    this.progress.stop();
    if (this.json) {
      out(JSON.stringify(await this.target.client.getTurn(this.target.agent.id, this.run!), null, 2));
    } else if (status === "completed") {
      if (this.streamed) this.endText();
      else out(text);
    } else {
      this.endText();
      err(`The turn ${status}: ${text}`);
    }
    return status === "completed" ? { code: 0, outcome: "✓ completed" } : { code: 1, outcome: `✗ ${status}` };
  }
}
