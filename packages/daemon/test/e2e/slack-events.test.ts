/**
 * Slack's Events API against the real daemon: signed requests only, retries
 * not queued twice (also across a restart), each thread one conversation
 * whose replies are posted in that thread, and an asleep agent woken by a
 * mention. Slack itself is the loopback stand-in.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { agentFile, short, type WireEvent } from "../helpers/spawn-daemon.js";
import { messageEvent } from "../helpers/slack-loopback.js";
import { sleep, waitFor } from "../helpers/wait.js";
import { BOT_TOKEN, CHANNEL, createSlackProject, SIGNING_SECRET, SOMEONE, type SlackProject } from "../helpers/slack-project.js";

let s: SlackProject;

beforeAll(async () => {
  s = await createSlackProject({
    scripts: { echo_back: "steps:\n  - text: 'You said: {{message}}'\n" },
    files: {
      "agents/triage.md": agentFile({ description: "Answers in Slack", model: "echo_back" }),
      "agents/sleepy.md": agentFile({ description: "Falls asleep at once", model: "echo_back", idle_timeout: 1 }),
    },
    channels: { [CHANNEL]: "triage", C0SLEEPY: "sleepy" },
    // What Slack refused is retried by a sweep this often.
    // Idle agents are put to sleep within 100 ms of their idle_timeout, a reply is updated 100 ms after its last
    // update, not a second (slack-streaming checks the second), and a reply whose last word failed is the sweep's
    // 500 ms after its turn ended, not 5 s.
    env: {
      ...{ WARDRIK_SLACK_SWEEP_MS: "200", WARDRIK_SLEEP_CHECK_MS: "100" },
      ...{ WARDRIK_SLACK_UPDATE_MS: "100", WARDRIK_SLACK_REPLY_GRACE_MS: "500" },
    },
  });
});

/** The daemon's JSON log lines (its log on a pipe). */
function logLines(stderr: string): Record<string, unknown>[] {
  return stderr.split("\n").flatMap((line) => {
    try {
      return line.startsWith("{") ? [JSON.parse(line) as Record<string, unknown>] : [];
    } catch {
      return [];
    }
  });
}

const queued = async (agent: string): Promise<WireEvent[]> => (await s.p.events(agent)).filter((e) => short(e.type) === "message.queued");

/** The reply posted in a thread once its turn ended with `text`. */
const replyIn = (threadTs: string, text: string) =>
  s.slack.waitFor(
    () => [...s.slack.messages.values()].find((m) => m.thread_ts === threadTs && m.text === text),
    `the reply "${text}" in thread ${threadTs}`,
  );

describe("requests from Slack are verified", () => {
  const body = JSON.stringify({ type: "url_verification", challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P", token: "x" });

  it("answers a signed url_verification with its challenge, without a bearer token", async () => {
    const r = await s.event(body);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" });
  });

  it("refuses (401) an unsigned request, a wrong signature and a timestamp older than 5 minutes, and says why", async () => {
    const unsigned = await s.event(body, { unsigned: true });
    expect(unsigned.status).toBe(401);
    expect(unsigned.json).toMatchObject({
      code: "unauthorized",
      detail: expect.stringMatching(/X-Slack-Request-Timestamp and X-Slack-Signature/),
    });
    const wrong = await s.event(body, { secret: "not-the-signing-secret" });
    expect(wrong.status).toBe(401);
    expect(wrong.json).toMatchObject({ detail: "X-Slack-Signature does not match the request." });
    // Correctly signed, but six minutes old: a replayed request.
    const old = await s.event(body, { timestamp: Math.floor(Date.now() / 1000) - 6 * 60 });
    expect(old.status).toBe(401);
    expect(old.json).toMatchObject({ detail: expect.stringMatching(/more than 5 minutes/) });
    // A body changed after signing.
    const ts = String(Math.floor(Date.now() / 1000));
    const { slackSignature } = await import("../helpers/slack-loopback.js");
    const tampered = await fetch(`${s.p.url}/v1/slack/events`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-slack-request-timestamp": ts,
        "x-slack-signature": slackSignature(SIGNING_SECRET, ts, body),
      },
      body: body.replace("3eZ", "4eZ"),
    });
    expect(tampered.status).toBe(401);
    // Nothing of the secrets shows in the answers or the log.
    for (const text of [unsigned.text, wrong.text, old.text, s.p.daemonStderr()]) {
      expect(text).not.toContain(SIGNING_SECRET);
      expect(text).not.toContain(BOT_TOKEN);
    }
  });
});

describe("messages and threads", () => {
  it("a mention queues a message in the conversation of its thread, and the reply is posted in that thread", async () => {
    const root = "1700000001.000100";
    expect((await s.mention("what changed today?", root)).status).toBe(200);
    await replyIn(root, "You said: what changed today?");
    const [q] = await queued("triage");
    // The mention that addressed the bot is not part of the message.
    expect(q!.data).toMatchObject({ conversation: `slack:${CHANNEL}:${root}`, text: "what changed today?" });
    const post = s.slack.callsOf("chat.postMessage").find((c) => c.args.thread_ts === root)!;
    expect(post.args.channel).toBe(CHANNEL);

    // A reply in the thread (its own ts, thread_ts = the root) goes to the same conversation.
    expect((await s.mention("and now?", "1700000001.000200", root)).status).toBe(200);
    await replyIn(root, "You said: and now?");
    // A plain message in the mapped channel, without a mention, in a new thread.
    const plain = messageEvent({ type: "message", channel: CHANNEL, user: SOMEONE, text: "hello there", ts: "1700000002.000100" });
    expect((await s.event(plain)).status).toBe(200);
    await replyIn("1700000002.000100", "You said: hello there");

    const conversations = (await queued("triage")).map((e) => e.data.conversation);
    expect(conversations).toEqual([`slack:${CHANNEL}:${root}`, `slack:${CHANNEL}:${root}`, `slack:${CHANNEL}:1700000002.000100`]);
    // The conversation holds both turns of the thread.
    const id = await s.p.agentId("triage");
    const convs = await s.p.apiOk<{ conversations: { key: string }[] }>("GET", `/v1/agents/${id}/conversations`);
    expect(
      convs.conversations
        .map((c) => c.key)
        .filter((k) => k.startsWith("slack:"))
        .sort(),
    ).toEqual([`slack:${CHANNEL}:1700000001.000100`, `slack:${CHANNEL}:1700000002.000100`]);
  });

  it("ignores bots (its own replies among them), edits, and channels no agent is mapped to", async () => {
    const before = (await queued("triage")).length;
    const bot = messageEvent({
      type: "message",
      channel: CHANNEL,
      user: "U0BOTID",
      bot_id: "B0BOT",
      text: "You said: x",
      ts: "1700000003.000100",
    });
    const edit = JSON.stringify({
      ...JSON.parse(messageEvent({ type: "message", channel: CHANNEL, user: SOMEONE, text: "x", ts: "1700000003.000200" })),
    });
    const edited = edit.replace('"type":"message"', '"type":"message","subtype":"message_changed"');
    const elsewhere = messageEvent({ channel: "C0NOTMAPPED", user: SOMEONE, text: "<@U0BOTID> hi", ts: "1700000003.000300" });
    for (const body of [bot, edited, elsewhere]) expect((await s.event(body)).status).toBe(200);
    // A message that is processed afterwards shows the others were not.
    await s.mention("marker", "1700000003.000400");
    await replyIn("1700000003.000400", "You said: marker");
    expect((await queued("triage")).map((e) => e.data.text).slice(before)).toEqual(["marker"]);
  });
});

describe("retries", () => {
  it("an event Slack sends again is queued once, also when it comes as app_mention and message, and after a restart", async () => {
    const ts = "1700000004.000100";
    const event = messageEvent({ channel: CHANNEL, user: SOMEONE, text: "<@U0BOTID> once only", ts, event_id: "Ev0RETRY0001" });
    expect((await s.event(event)).status).toBe(200);
    expect((await s.event(event, { retryNum: 1 })).status).toBe(200);
    // The same message as a `message` event has another event_id.
    const asMessage = messageEvent({
      type: "message",
      channel: CHANNEL,
      user: SOMEONE,
      text: "<@U0BOTID> once only",
      ts,
      event_id: "Ev0RETRY0002",
    });
    expect((await s.event(asMessage)).status).toBe(200);
    await replyIn(ts, "You said: once only");

    // What was taken is in the database: a restarted daemon still knows it.
    await s.p.restart();
    expect((await s.event(event, { retryNum: 2 })).status).toBe(200);
    // A later message shows the retry was not queued.
    await s.mention("after the restart", "1700000004.000200");
    await replyIn("1700000004.000200", "You said: after the restart");
    const texts = (await queued("triage")).map((e) => e.data.text);
    expect(texts.filter((t) => t === "once only")).toHaveLength(1);
    expect(s.slack.callsOf("chat.postMessage").filter((c) => c.args.thread_ts === ts)).toHaveLength(1);
  });
});

describe("Slack out of service", () => {
  it("a reply Slack refused is posted in its thread once Slack answers again", async () => {
    const ts = "1700000006.000100";
    const id = await s.p.agentId("triage");
    s.slack.failing.add("chat.postMessage");
    try {
      await s.mention("during the outage", ts);
      const q = await s.p.waitForEvent(id, (e) => short(e.type) === "message.queued" && e.data.text === "during the outage");
      const run = await s.p.waitForEvent(
        id,
        (e) => short(e.type) === "turn.started" && (e.data.messages as string[]).includes(String(q.data.message)),
      );
      await s.p.waitForTurnEnd(id, String(run.run));
      await s.slack.waitFor(() => s.slack.callsOf("chat.postMessage").some((c) => c.args.thread_ts === ts), "the post that fails");
      // Past the reply's own last try: only a sweep can post it now.
      await waitFor(
        () =>
          logLines(s.p.daemonStderr()).some(
            (l) => l.msg === "a reply could not be shown in Slack" && l.run === run.run && l.final === true,
          ),
        "the reply's own last try, refused",
      );
    } finally {
      s.slack.failing.clear();
    }
    await replyIn(ts, "You said: during the outage");
    // Several sweeps (200 ms apart) later it is still there once.
    await sleep(600);
    expect([...s.slack.messages.values()].filter((m) => m.thread_ts === ts)).toHaveLength(1);
  });
});

describe("an agent asleep when the mention arrives", () => {
  it("is woken by it and answers in the thread", async () => {
    const id = await s.p.agentId("sleepy");
    // A first message wakes it; a second after that it falls asleep (idle_timeout 1).
    await s.p.send("sleepy", "before Slack");
    await s.p.waitForEvent(id, (e) => short(e.type) === "agent.asleep", 30_000);
    const show = await s.p.cli(["ls", "--json"]);
    expect(JSON.parse(show.stdout)).toContainEqual(expect.objectContaining({ name: "sleepy", status: "asleep" }));

    const ts = "1700000005.000100";
    const body = messageEvent({ channel: "C0SLEEPY", user: SOMEONE, text: "<@U0BOTID> wake up", ts });
    expect((await s.event(body)).status).toBe(200);
    await s.slack.waitFor(
      () => [...s.slack.messages.values()].find((m) => m.channel === "C0SLEEPY" && m.thread_ts === ts && m.text === "You said: wake up"),
      "the woken agent's reply",
    );
    const events = await s.p.events(id);
    const types = events.map((e) => short(e.type));
    // With idle_timeout 1 it may fall asleep again before the events are read: look for a
    // wake after the sleep the test waited for, not at the last one.
    const slept = types.indexOf("agent.asleep");
    expect(types.indexOf("agent.awake", slept)).toBeGreaterThan(slept);
    expect(events.find((e) => short(e.type) === "message.queued" && e.data.text === "wake up")?.data.conversation).toBe(
      `slack:C0SLEEPY:${ts}`,
    );
  });
});
