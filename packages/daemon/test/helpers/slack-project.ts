/**
 * A real project whose daemon talks to the loopback Slack stand-in: config.yaml
 * has a `slack:` section with its token and signing secret stored as secrets
 * (`wardrik secret set`, as a user would), channel C0123ABCD mapped to agent
 * `triage`, and U0456EFGH the one approver.
 */
import { agentFile, createProject, type ProjectOptions, type TestProject } from "./spawn-daemon.js";
import {
  buttonClick,
  messageEvent,
  sendAsSlack,
  startSlackLoopback,
  type SlackLoopback,
  type SlackRequestOptions,
} from "./slack-loopback.js";

export const BOT_TOKEN = "xoxb-1234-5678-loopbacktokenvalue";
export const SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
export const CHANNEL = "C0123ABCD";
export const APPROVER = "U0456EFGH";
export const SOMEONE = "U0999OTHER";

/**
 * The agent most Slack tests talk to: `triage` writes a note with
 * files/write, which its policy sends to a person, then answers with the
 * result (`result: {"path":"notes/MESSAGE.md","bytes":10}`).
 */
export const NOTE_WRITER: Pick<ProjectOptions, "scripts" | "files"> = {
  scripts: {
    writer: `steps:
  - tool_calls:
      - tool: files/write
        args: { path: "notes/{{message}}.md", content: "from slack" }
  - text: "result: {{result}}"
`,
  },
  files: {
    "policies/careful.yaml": `rules:
  - tool: files/write
    decision: ask
    reason: Writing needs a person's OK.
`,
    "agents/triage.md": agentFile({ description: "Writes notes from Slack", model: "writer", tools: ["files"], policy: "careful" }),
  },
};

export interface SlackProject {
  p: TestProject;
  slack: SlackLoopback;
  /** Sends an Events API body, signed. */
  event(body: string, opts?: SlackRequestOptions): Promise<{ status: number; text: string; json: unknown }>;
  /** A mention of the app in CHANNEL (a new thread unless thread_ts is given). */
  mention(text: string, ts: string, threadTs?: string, opts?: SlackRequestOptions): Promise<{ status: number; json: unknown }>;
  /** A click on a button of a posted message, signed. */
  click(user: string, messageTs: string, actionId: string, value: string): Promise<{ status: number; text: string }>;
}

export async function createSlackProject(
  options: Omit<ProjectOptions, "config" | "start"> & { channels?: Record<string, string> },
): Promise<SlackProject> {
  const slack = await startSlackLoopback(BOT_TOKEN);
  const channels = options.channels ?? { [CHANNEL]: "triage" };
  const block = [
    "slack:",
    "  bot_token: ${secret:SLACK_BOT_TOKEN}",
    "  signing_secret: ${secret:SLACK_SIGNING_SECRET}",
    `  api_url: ${slack.apiUrl}`,
    "  channels:",
    ...Object.entries(channels).map(([c, a]) => `    ${c}: ${a}`),
    `  approvers: [${APPROVER}]`,
    "",
  ].join("\n");
  const { channels: _omit, ...rest } = options;
  const p = await createProject({ ...rest, config: (text) => `${text.replace(/\n?$/, "\n")}${block}`, start: false });
  for (const [name, value] of [
    ["SLACK_BOT_TOKEN", BOT_TOKEN],
    ["SLACK_SIGNING_SECRET", SIGNING_SECRET],
  ] as const) {
    const r = await p.cli(["secret", "set", name], { input: value });
    if (r.code !== 0) throw new Error(`wardrik secret set ${name} failed: ${r.stderr}`);
  }
  await p.start();
  const event: SlackProject["event"] = (body, opts) =>
    sendAsSlack(`${p.url}/v1/slack/events`, SIGNING_SECRET, body, "application/json", opts);
  return {
    p,
    slack,
    event,
    mention: (text, ts, threadTs, opts) =>
      event(
        messageEvent({ channel: CHANNEL, user: SOMEONE, text: `<@U0BOTID> ${text}`, ts, ...(threadTs ? { thread_ts: threadTs } : {}) }),
        opts,
      ),
    click: (user, messageTs, actionId, value) =>
      sendAsSlack(
        `${p.url}/v1/slack/interactions`,
        SIGNING_SECRET,
        buttonClick({ user, channel: CHANNEL, messageTs, actionId, value, threadTs: slack.messages.get(messageTs)?.thread_ts }),
        "application/x-www-form-urlencoded",
      ),
  };
}
