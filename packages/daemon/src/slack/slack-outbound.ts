/**
 * What Slack threads show of their conversations: each turn's reply
 * (streamed), each call that waits for approval (Block Kit, with buttons),
 * and each decision, wherever it was made. Driven by the events this node
 * commits (a cluster's other nodes handle theirs) and live text deltas. What
 * was posted where is kept in the database, and each post or update is
 * claimed there by one node first, so it happens once in a cluster. A sweep,
 * at the start and then every `sweepMs`, does what nobody did: a post Slack
 * refused, or the work of a node that stopped or died on the way.
 */
import type { EventBus, StoredEvent } from "../events/event-bus.js";
import type { Logger } from "../log/logger.js";
import type { SlackMessageRow } from "../store/slack.js";
import type { Store } from "../store/store.js";
import { approvalMessage, type Decision, type WaitingCallView } from "./approval-message.js";
import { postOnce, type PostOnceDeps } from "./post-once.js";
import { ReplyStream } from "./reply-stream.js";
import type { Blocks, SlackApi } from "./slack-api.js";
import { questionMessage, type QuestionView } from "./question-message.js";
import { ASK_PERSON_TOOL } from "../runtime/answer-question.js";
import { threadOf, type SlackThread } from "./slack-thread.js";

export interface SlackOutboundOptions {
  api: SlackApi;
  store: Store;
  bus: EventBus;
  org: string;
  /** Channels Wardrik may post in (config.yaml slack.channels). */
  channels: ReadonlySet<string>;
  log: Logger;
  now: () => Date;
  /** Least time between two updates of a streamed reply (default a second). */
  minUpdateMs?: number;
  /** This node's name: what its claims are held under. */
  node: string;
  /** How often the sweep runs (default 30 s). */
  sweepMs?: number;
  /** How long after its turn ended a reply without its last word becomes the sweep's to finish (default REPLY_GRACE_MS). */
  replyGraceMs?: number;
  /** Told of each post made again while an earlier copy in Slack could not be ruled out. */
  onPossibleDuplicate?: (() => void) | undefined;
}

/** A reply of a turn that ended this long ago without its last word is the sweep's to finish (its node is gone or failed). */
const REPLY_GRACE_MS = 5_000;
/** Replies Slack missed are posted for turns that ended within this time; older ones are history. */
const REPLY_CATCH_UP_MS = 60 * 60 * 1000;

const PREFIX = "dev.wardrik.";

export class SlackOutbound {
  /** Each run's thread, or null for a run that is not in a Slack thread. */
  private readonly threads = new Map<string, Promise<SlackThread | null>>();
  private readonly streams = new Map<string, ReplyStream>();
  /** The text the current model call of a run has streamed. */
  private readonly texts = new Map<string, string>();
  /** Work for one run, in the order its events came. */
  private readonly chains = new Map<string, Promise<void>>();
  private unsubscribe: (() => void) | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly o: SlackOutboundOptions) {}

  /** Follows this node's events, and sweeps now and every `sweepMs`. */
  async start(): Promise<void> {
    // What this node's previous process was posting when it stopped is done now, not once its claims run out.
    await this.o.store.slack.releaseClaimsOf(this.o.node);
    // The bus carries the events this process committed; other nodes' events only poke it.
    this.unsubscribe = this.o.bus.subscribe("*", (e) => {
      if (e.org !== this.o.org || e.run === undefined) return;
      this.onEvent(e.run, e);
    });
    await this.sweep();
    this.sweepTimer = setInterval(() => void this.sweep(), this.o.sweepMs ?? 30_000);
    this.sweepTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweepTimer);
    this.unsubscribe?.();
    await this.sweeping;
    for (const s of this.streams.values()) s.close();
    await Promise.allSettled([...this.chains.values()]);
  }

  /** One sweep at a time; a failed one is logged and the next tries again. */
  sweep(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.sweeping ??= this.catchUp()
      .catch((err: unknown) => this.o.log("warn", "Slack could not be brought up to date; trying again later", { err: String(err) }))
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  /** A live text delta of a model reply (`reset`: the call is retried, drop what it streamed). */
  onDelta(run: string, text: string, reset?: boolean): void {
    this.then(run, async () => {
      const thread = await this.threadOfRun(run);
      if (!thread) return;
      const so_far = reset ? "" : (this.texts.get(run) ?? "") + text;
      this.texts.set(run, so_far);
      this.stream(run, thread).show(so_far);
    });
  }

  /** Posts approvals that were never posted, and shows decisions and replies that Slack missed. */
  private async catchUp(): Promise<void> {
    const now = this.o.now();
    for (const c of await this.o.store.slack.waitingWithoutMessage(now)) {
      if (this.closed) return;
      const thread = threadOf(c.conversation);
      if (c.org !== this.o.org || !thread || !this.o.channels.has(thread.channel)) continue;
      if (c.tool === ASK_PERSON_TOOL) await this.postQuestion(thread, { callId: c.call_id, agent: c.agent_name, args: c.args });
      else await this.postApproval(thread, { callId: c.call_id, agent: c.agent_name, tool: c.tool, args: c.args, reason: c.reason ?? "" });
    }
    for (const m of await this.o.store.slack.decidedButOpen(now)) {
      if (this.closed) return;
      const verdict = m.call_status === "denied" ? "denied" : m.call_status === "killed" ? "stopped" : "approved";
      const view = { callId: m.ref, agent: m.agent_name, tool: m.tool, args: m.args, reason: m.reason ?? "" };
      await this.showDecision(m, view, { verdict, by: m.decided_by ?? undefined, at: this.o.now() });
    }
    const graceEnd = new Date(now.getTime() - (this.o.replyGraceMs ?? REPLY_GRACE_MS));
    for (const t of await this.o.store.slack.endedWithoutReply(now, graceEnd, new Date(now.getTime() - REPLY_CATCH_UP_MS))) {
      const thread = threadOf(t.conversation);
      if (this.closed) return;
      if (t.org !== this.o.org || !thread || !this.o.channels.has(thread.channel)) continue;
      const text = t.turn_status === "completed" ? (t.turn_reply ?? "") : endText(t.turn_status, t.turn_reason ?? "");
      const stream = this.stream(t.run, thread);
      stream.finish(text);
      await stream.done;
      this.forget(t.run);
    }
    for (const m of await this.o.store.slack.endedButStreaming(now, graceEnd)) {
      if (this.closed) return;
      const text = m.turn_status === "completed" ? (m.turn_reply ?? "") : endText(m.turn_status, m.turn_reason ?? "");
      const stream = this.stream(m.ref, { channel: m.channel, threadTs: m.thread_ts });
      stream.finish(text);
      await stream.done;
      this.forget(m.ref);
    }
  }

  private onEvent(run: string, e: StoredEvent): void {
    const type = e.type.slice(PREFIX.length);
    if (type === "turn.started") {
      const thread = threadOf(String(e.data.conversation));
      this.threads.set(run, Promise.resolve(thread && this.o.channels.has(thread.channel) ? thread : null));
      return;
    }
    if (!WATCHED.has(type)) return;
    this.then(run, async () => {
      const thread = await this.threadOfRun(run);
      if (!thread) {
        // Not a Slack conversation: nothing to show, and nothing to keep about the run once it ends.
        if (type.startsWith("turn.")) this.forget(run);
        return;
      }
      const d = e.data;
      switch (type) {
        case "model.replied":
          // The next model call streams a new text.
          this.texts.delete(run);
          return;
        case "approval.requested":
          return this.postApproval(thread, {
            callId: String(d.call),
            agent: await this.agentName(e.agent),
            tool: String(d.tool),
            args: d.args,
            reason: String(d.reason),
          });
        case "question.asked":
          return this.postQuestion(thread, {
            callId: String(d.call),
            agent: await this.agentName(e.agent),
            args: JSON.stringify({ question: d.question, ...(d.choices ? { choices: d.choices } : {}) }),
          });
        case "question.answered":
        case "approval.granted":
        case "approval.denied":
        case "call.killed":
          // A kill of a call that was not waiting finds no open approval message and changes nothing.
          return this.decided(
            String(d.call),
            type === "approval.granted" || type === "question.answered" ? "approved" : type === "approval.denied" ? "denied" : "stopped",
            new Date(e.time),
          );
        default: {
          const text = type === "turn.completed" ? String(d.reply ?? "") : endText(type.slice("turn.".length), String(d.reason ?? ""));
          const stream = this.stream(run, thread);
          stream.finish(text);
          await stream.done;
          this.forget(run);
        }
      }
    });
  }

  private postApproval(thread: SlackThread, view: WaitingCallView): Promise<void> {
    return this.postWaiting(thread, view.callId, approvalMessage(view), "a call waiting for approval");
  }

  /** A question is kept as an approval row (keyed by its call), so the sweeps post and close it like one. */
  private postQuestion(thread: SlackThread, view: QuestionView): Promise<void> {
    return this.postWaiting(thread, view.callId, questionMessage(view), "a question to a person");
  }

  /** The open message of a call that waits for a person, posted once; a failure is logged and left to the sweep. */
  private async postWaiting(thread: SlackThread, callId: string, m: { text: string; blocks: Blocks }, what: string): Promise<void> {
    const message = { kind: "approval" as const, ref: callId, channel: thread.channel, threadTs: thread.threadTs, state: "open" };
    try {
      await postOnce(this.postDeps(), message, m.text, m.blocks);
    } catch (err) {
      this.o.log("warn", `${what} could not be posted in Slack; the next sweep tries again`, { call: callId, err: String(err) });
    }
  }

  /** A question's message once it is no longer open: the answer and who gave it, or that it was stopped. */
  private async answeredMessage(view: WaitingCallView, decision: Decision): Promise<{ text: string; blocks: Blocks }> {
    const call = await this.o.store.calls.get(view.callId);
    const result = call?.status === "completed" && call.result ? (JSON.parse(call.result) as { answer?: unknown }) : undefined;
    const answer = typeof result?.answer === "string" ? result.answer : undefined;
    return questionMessage(
      { callId: view.callId, agent: view.agent, args: String(view.args) },
      { answer, by: decision.by, at: decision.at },
    );
  }

  private postDeps(): PostOnceDeps {
    const { api, store, now, log, node, onPossibleDuplicate } = this.o;
    return { api, table: store.slack, now, log, node, onPossibleDuplicate };
  }

  private async decided(callId: string, verdict: Decision["verdict"], at: Date): Promise<void> {
    const row = await this.o.store.slack.message("approval", callId);
    if (!row?.ts || row.state === "decided") return;
    const call = await this.o.store.calls.get(callId);
    if (!call) return;
    const view = { callId, agent: await this.agentName(call.agent_id), tool: call.tool, args: call.args, reason: call.reason ?? "" };
    // A click in Slack noted its user on the message before the decision committed.
    await this.showDecision(row, view, { verdict, by: row.decided_by ?? undefined, at });
  }

  private async showDecision(row: SlackMessageRow, view: WaitingCallView, decision: Decision): Promise<void> {
    const { api, store, now, log, node } = this.o;
    if (!row.ts || !(await store.slack.claimUpdate("approval", row.ref, "open", node, now()))) return;
    const { text, blocks } = view.tool === ASK_PERSON_TOOL ? await this.answeredMessage(view, decision) : approvalMessage(view, decision);
    try {
      await api.update(row.channel, row.ts, text, blocks);
      await store.slack.setState("approval", row.ref, "decided", now(), decision.by);
    } catch (err) {
      // Still open in the database: the next sweep tries again.
      await store.slack.dropClaim("approval", row.ref, node);
      log("warn", "a decision could not be shown in Slack", { call: row.ref, err: String(err) });
    }
  }

  private stream(run: string, thread: SlackThread): ReplyStream {
    let s = this.streams.get(run);
    if (!s) {
      s = new ReplyStream(run, thread, { ...this.postDeps(), minIntervalMs: this.o.minUpdateMs ?? 1000 });
      this.streams.set(run, s);
    }
    return s;
  }

  private forget(run: string): void {
    this.streams.delete(run);
    this.texts.delete(run);
    this.threads.delete(run);
  }

  private threadOfRun(run: string): Promise<SlackThread | null> {
    let t = this.threads.get(run);
    if (!t) {
      t = this.o.store.slack.conversationOfRun(run).then((c) => {
        const thread = c && c.org === this.o.org ? threadOf(c.conversation) : undefined;
        return thread && this.o.channels.has(thread.channel) ? thread : null;
      });
      this.threads.set(run, t);
    }
    return t;
  }

  private async agentName(agentId: string): Promise<string> {
    return (await this.o.store.agents.get(agentId))?.name ?? agentId;
  }

  private then(run: string, work: () => Promise<void>): void {
    const next = (this.chains.get(run) ?? Promise.resolve())
      .then(work)
      .catch((err: unknown) => this.o.log("warn", "Slack could not be updated", { run, err: String(err) }));
    this.chains.set(run, next);
    void next.then(() => {
      if (this.chains.get(run) === next) this.chains.delete(run);
    });
  }
}

const WATCHED = new Set([
  "model.replied",
  "question.asked",
  "question.answered",
  "approval.requested",
  "approval.granted",
  "approval.denied",
  "call.killed",
  "turn.completed",
  "turn.failed",
  "turn.cancelled",
]);

function endText(status: string, reason: string): string {
  return `:warning: The turn ${status === "cancelled" ? "was cancelled" : "failed"}: ${reason}`;
}
