/**
 * The Slack message of a question an agent asks a person (person/ask): the
 * question, its choices, and that a reply in the thread answers it; once
 * answered, who answered what and when (or that it was stopped unanswered).
 */
import { readQuestion } from "../runtime/answer-question.js";
import { escape } from "./approval-message.js";
import type { Blocks } from "./slack-api.js";

export interface QuestionView {
  callId: string;
  agent: string;
  /** The call's arguments as stored (JSON text). */
  args: string;
}

export interface Answered {
  /** Undefined: the call was stopped (killed, or its turn cancelled) before anyone answered. */
  answer?: string | undefined;
  /** A Slack user ID, when the answer came from Slack. */
  by?: string | undefined;
  at: Date;
}

export function questionMessage(q: QuestionView, answered?: Answered): { text: string; blocks: Blocks } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(q.args);
  } catch {
    parsed = undefined;
  }
  const asked = readQuestion(parsed);
  const question = "error" in asked ? "(unreadable question)" : asked.question;
  const choices = "error" in asked ? undefined : asked.choices;
  const blocks: Blocks = [section(`*${escape(q.agent)}* asks (call \`${q.callId}\`):\n>${escape(question).replace(/\n/g, "\n>")}`)];
  if (!answered) {
    const how = choices
      ? `Reply in this thread with one of: ${choices.map((c) => `\`${escape(c)}\``).join(", ")}`
      : "Reply in this thread to answer.";
    blocks.push({ type: "context", elements: [{ type: "mrkdwn", text: how }] });
    return { text: `${q.agent} asks: ${question}`, blocks };
  }
  const line = answeredLine(answered);
  blocks.push(section(line));
  return { text: `${q.agent} asked: ${question} — ${line}`, blocks };
}

function answeredLine(a: Answered): string {
  const seconds = Math.floor(a.at.getTime() / 1000);
  const when = `at <!date^${seconds}^{date_short_pretty} {time_secs}|${a.at.toISOString()}>`;
  if (a.answer === undefined) return `:octagonal_sign: Stopped before anyone answered ${when}`;
  const who = a.by ? `by <@${a.by}>` : "outside Slack (CLI, API or console)";
  return `:speech_balloon: Answered ${who} ${when}: ${escape(a.answer)}`;
}

function section(text: string): Record<string, unknown> {
  return { type: "section", text: { type: "mrkdwn", text } };
}
