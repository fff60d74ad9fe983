/**
 * What Slack sends Wardrik, once its signature has been checked: messages
 * (an app mention, or any message in a mapped channel) become messages
 * queued for the channel's agent, in the conversation of their thread; a
 * click on Approve or Deny decides the call when the clicking user is an
 * approver; a reply in a thread whose turn waits for a person's answer
 * (person/ask) answers it, when an approver wrote it. Slack sends an event
 * again when it did not hear back in time; the database remembers what was
 * taken, so nothing is queued twice, not even across a restart.
 */
import { WardrikError } from "@wardrik/protocol";
import type { SlackSettings } from "../config/types.js";
import type { Logger } from "../log/logger.js";
import type { Runtime } from "../runtime/runtime.js";
import type { AgentRow } from "../store/rows.js";
import type { Store } from "../store/store.js";
import { APPROVE_ACTION, DENY_ACTION } from "./approval-message.js";
import type { SlackApi } from "./slack-api.js";
import type { EventEnvelope, InteractionPayload } from "./slack-payloads.js";
import { conversationKey } from "./slack-thread.js";

export const NOT_ALLOWED =
  "You are not allowed to approve or deny calls from Slack. The people who may are listed under slack.approvers in the project's config.yaml.";

export const NOT_ALLOWED_TO_ANSWER =
  "You are not allowed to answer the agent's questions from Slack. The people who may are listed under slack.approvers in the project's config.yaml.";

const PURGE_EVERY_MS = 10 * 60 * 1000;
/** Slack stops retrying an event within the hour; a day is ample. */
const KEEP_REQUESTS_MS = 24 * 60 * 60 * 1000;

export interface SlackInboundOptions {
  settings: SlackSettings;
  org: string;
  store: Store;
  runtime: Runtime;
  api: SlackApi;
  log: Logger;
  now: () => Date;
  /** Identifies this daemon process in the table of taken requests. */
  owner: string;
}

export class SlackInbound {
  private lastPurge = 0;

  constructor(private readonly o: SlackInboundOptions) {}

  /** An Events API request; the answer is the JSON body for Slack. */
  async event(body: EventEnvelope): Promise<Record<string, unknown>> {
    if (body.type === "url_verification") {
      if (body.challenge === undefined) throw new WardrikError("bad_request", "A url_verification request needs a challenge.");
      return { challenge: body.challenge };
    }
    const ev = body.event;
    if (body.type !== "event_callback" || !ev || (ev.type !== "app_mention" && ev.type !== "message")) return { ok: true };
    // Bots' messages (Wardrik's own replies among them), edits, joins and the like carry a subtype or a bot_id.
    if (ev.bot_id !== undefined || ev.subtype !== undefined || !ev.channel || !ev.ts || !ev.user) return { ok: true };
    const agentName = this.o.settings.channels[ev.channel];
    if (agentName === undefined) {
      this.o.log("info", "a Slack message in a channel no agent is mapped to was ignored", { channel: ev.channel });
      return { ok: true };
    }
    await this.purge();
    // One message can come as app_mention and as message, each with its own event_id.
    const keys = [...(body.event_id ? [`event:${body.event_id}`] : []), `message:${ev.channel}:${ev.ts}`];
    if (!(await this.o.store.slack.take(keys, this.o.owner, this.o.now()))) return { ok: true };
    const thread = { channel: ev.channel, threadTs: ev.thread_ts ?? ev.ts };
    try {
      const text = withoutLeadingMentions(ev.text ?? "");
      const agent = await this.o.store.agents.byName(this.o.org, agentName);
      if (!agent) {
        this.o.log("warn", "slack.channels names an agent that does not exist", { channel: ev.channel, agent: agentName });
        await this.note(
          thread,
          `No agent named ${agentName} exists, so this message was not delivered. Check slack.channels in config.yaml.`,
        );
      } else if (text !== "") {
        const question = await this.o.store.calls.questionIn(agent.id, conversationKey(thread));
        if (question) await this.answer(agent, question.id, text, ev.user, ev.channel, thread.threadTs);
        else await this.o.runtime.enqueue(agent, conversationKey(thread), text);
      }
      await this.o.store.slack.finish(keys);
    } catch (err) {
      if (WardrikError.isInstance(err) && err.code === "unreadable") {
        // Trying again cannot help until someone fixes the agent's file.
        await this.o.store.slack.finish(keys);
        await this.note(thread, `Agent ${agentName} cannot take messages: ${err.message}`);
        return { ok: true };
      }
      // Not queued: Slack's retry may take it.
      await this.o.store.slack.release(keys, this.o.owner);
      throw err;
    }
    return { ok: true };
  }

  /** A click in a message Wardrik posted. */
  async interaction(payload: InteractionPayload): Promise<void> {
    if (payload.type !== "block_actions") return;
    const action = payload.actions.find((a) => a.action_id === APPROVE_ACTION || a.action_id === DENY_ACTION);
    if (!action?.value) return;
    const user = payload.user.id;
    const channel = payload.channel?.id ?? payload.container?.channel_id;
    const threadTs = payload.message?.thread_ts ?? payload.container?.thread_ts;
    if (!this.o.settings.approvers.includes(user)) {
      this.o.log("info", "a Slack user who is not an approver clicked a decision", { user, call: action.value });
      if (channel) await this.tell(channel, user, NOT_ALLOWED, threadTs);
      return;
    }
    const callId = action.value;
    const call = await this.o.store.calls.get(callId);
    const agent = call ? await this.o.store.agents.get(call.agent_id) : undefined;
    if (!agent || agent.org !== this.o.org) {
      if (channel) await this.tell(channel, user, `There is no call ${callId} to decide.`, threadTs);
      return;
    }
    // On the message before the decision commits: the node that shows the decision (maybe another one, after a crash) names them.
    await this.o.store.slack.noteDecider(callId, user);
    try {
      if (action.action_id === APPROVE_ACTION) await this.o.runtime.approve(agent, callId, undefined, `slack:${user}`);
      else await this.o.runtime.deny(agent, callId, `Denied in Slack by user ${user}.`, `slack:${user}`);
      this.o.log("info", "a call was decided in Slack", { call: callId, user, verdict: action.action_id });
    } catch (err) {
      await this.o.store.slack.forgetDecider(callId, user);
      if (!WardrikError.isInstance(err) || (err.code !== "not_waiting" && err.code !== "not_found")) throw err;
      if (channel) await this.tell(channel, user, err.message, threadTs);
    }
  }

  /**
   * A reply in a thread whose turn waits for an answer answers its question,
   * when its author may decide calls (slack.approvers); anyone else, or an
   * answer outside the question's choices, is told privately why not.
   */
  private async answer(agent: AgentRow, callId: string, text: string, user: string, channel: string, threadTs: string): Promise<void> {
    if (!this.o.settings.approvers.includes(user)) {
      this.o.log("info", "a Slack user who is not an approver replied to a question", { user, call: callId });
      return this.tell(channel, user, NOT_ALLOWED_TO_ANSWER, threadTs);
    }
    await this.o.store.slack.noteDecider(callId, user);
    try {
      await this.o.runtime.answer(agent, callId, text, `slack:${user}`);
      this.o.log("info", "a question was answered in Slack", { call: callId, user });
    } catch (err) {
      await this.o.store.slack.forgetDecider(callId, user);
      if (!WardrikError.isInstance(err) || !["not_waiting", "not_found", "bad_request"].includes(err.code)) throw err;
      await this.tell(channel, user, err.message, threadTs);
    }
  }

  private async tell(channel: string, user: string, text: string, threadTs?: string): Promise<void> {
    await this.o.api
      .ephemeral(channel, user, text, threadTs)
      .catch((err: unknown) => this.o.log("warn", "an ephemeral Slack message could not be sent", { err: String(err) }));
  }

  private async note(thread: { channel: string; threadTs: string }, text: string): Promise<void> {
    await this.o.api
      .post(thread.channel, thread.threadTs, text, { kind: "note", ref: thread.threadTs })
      .catch((err: unknown) => this.o.log("warn", "a note could not be posted in Slack", { err: String(err) }));
  }

  private async purge(): Promise<void> {
    const now = this.o.now();
    if (now.getTime() - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = now.getTime();
    await this.o.store.slack.purge(new Date(now.getTime() - KEEP_REQUESTS_MS));
  }
}

/** `<@U0BOT> refund order 7` -> `refund order 7`: the mention that addressed the bot is not part of the message. */
export function withoutLeadingMentions(text: string): string {
  return text.replace(/^(\s*<@[A-Z0-9]+(\|[^>]*)?>[\s,:]*)+/, "").trim();
}
