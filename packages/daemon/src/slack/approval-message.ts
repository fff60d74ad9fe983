/**
 * The Block Kit message of a call that waits for a person: what the agent
 * wants to run, with which arguments and why it needs approval, with
 * Approve and Deny buttons; once decided, the same facts and who decided
 * when, without buttons.
 */
import type { Blocks } from "./slack-api.js";

export const APPROVE_ACTION = "wardrik_approve";
export const DENY_ACTION = "wardrik_deny";

export interface WaitingCallView {
  callId: string;
  agent: string;
  tool: string;
  /** The arguments as stored (JSON text) or as a value. */
  args: unknown;
  reason: string;
}

export interface Decision {
  /** `stopped`: the call was killed, or its turn cancelled, before anyone decided. */
  verdict: "approved" | "denied" | "stopped";
  /** A Slack user ID, when the decision was made in Slack. */
  by?: string | undefined;
  at: Date;
}

/** Slack caps a section's text at 3,000 characters. */
const MAX_ARGS_CHARS = 2_800;

export function approvalMessage(call: WaitingCallView, decision?: Decision): { text: string; blocks: Blocks } {
  const args = argsText(call.args);
  const blocks: Blocks = [
    section(`*${escape(call.agent)}* wants to run \`${escape(call.tool)}\` (call \`${call.callId}\`)`),
    section("```" + escape(args) + "```"),
    { type: "context", elements: [{ type: "mrkdwn", text: `Why it needs approval: ${escape(call.reason)}` }] },
  ];
  if (decision) {
    blocks.push(section(decisionLine(decision)));
    return { text: `${call.tool}: ${decisionLine(decision)}`, blocks };
  }
  blocks.push({
    type: "actions",
    block_id: "wardrik_decision",
    elements: [
      { type: "button", action_id: APPROVE_ACTION, text: plain("Approve"), style: "primary", value: call.callId },
      { type: "button", action_id: DENY_ACTION, text: plain("Deny"), style: "danger", value: call.callId },
    ],
  });
  return { text: `${call.agent} wants to run ${call.tool} and waits for approval`, blocks };
}

/** "Approved by <@U1> at <date>": Slack shows the date in each reader's time zone, the ISO time where it cannot. */
export function decisionLine(d: Decision): string {
  const seconds = Math.floor(d.at.getTime() / 1000);
  const when = `at <!date^${seconds}^{date_short_pretty} {time_secs}|${d.at.toISOString()}>`;
  if (d.verdict === "stopped") return `:octagonal_sign: Stopped before anyone decided (the call was killed or its turn cancelled) ${when}`;
  const who = d.by ? `by <@${d.by}>` : "outside Slack (CLI, API or console)";
  return d.verdict === "approved" ? `:white_check_mark: Approved ${who} ${when}` : `:no_entry: Denied ${who} ${when}`;
}

function argsText(args: unknown): string {
  let value = args;
  if (typeof args === "string") {
    try {
      value = JSON.parse(args);
    } catch {
      value = args;
    }
  }
  const text = JSON.stringify(value ?? {}, null, 2) ?? String(value);
  return text.length > MAX_ARGS_CHARS ? `${text.slice(0, MAX_ARGS_CHARS)}\n… (cut)` : text;
}

function section(text: string): Record<string, unknown> {
  return { type: "section", text: { type: "mrkdwn", text } };
}

function plain(text: string): Record<string, unknown> {
  return { type: "plain_text", text };
}

/** Slack's three control characters in message text. */
export function escape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
