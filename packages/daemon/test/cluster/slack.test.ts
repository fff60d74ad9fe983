/**
 * Slack with two daemons on one PostgreSQL database (a cluster): whichever
 * node Slack reaches, an event is queued once and every post or update
 * happens once, though both nodes sweep for what is left to do every 200 ms;
 * what Slack refused is done later by a sweep of either node, with no
 * restart. PostgreSQL only: SQLite holds one daemon.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { short, sleep, waitFor, type WireEvent } from "../helpers/spawn-daemon.js";
import { buttonClick, messageEvent, sendAsSlack, type PostedMessage } from "../helpers/slack-loopback.js";
import {
  APPROVER,
  CHANNEL,
  createSlackProject,
  NOTE_WRITER,
  SIGNING_SECRET,
  SOMEONE,
  type SlackProject,
} from "../helpers/slack-project.js";

/** Both nodes sweep every 200 ms, and update a reply 100 ms after its last update (slack-streaming checks Slack's second). */
const SWEEP = { WARDRIK_SLACK_SWEEP_MS: "200", WARDRIK_SLACK_UPDATE_MS: "100" };
const LISTENING = /wardrik daemon listening on (http:\/\/[^\s"]+)/;

let s: SlackProject;
/** The second node's base URL. */
let b = "";

beforeAll(async () => {
  s = await createSlackProject({
    ...NOTE_WRITER,
    env: SWEEP,
  });
  // The same project (config.yaml, database, secrets), a second daemon: node-b, on a port the system picks (a port
  // chosen beforehand could meanwhile be written into another test's config).
  const node = s.p.spawnCli(["daemon", "--node", "node-b", "--port", "0"], { env: SWEEP });
  await node.waitForOutput((out, err) => LISTENING.test(out + err));
  b = LISTENING.exec(node.stdout() + node.stderr())![1]!;
  await waitFor(async () => (await fetch(`${b}/v1/health`).catch(() => undefined))?.ok || undefined, "node-b to answer", 30_000);
});

const atNode = (url: string) => ({
  event: (body: string, retryNum?: number) =>
    sendAsSlack(`${url}/v1/slack/events`, SIGNING_SECRET, body, "application/json", retryNum === undefined ? {} : { retryNum }),
  click: (user: string, m: PostedMessage, actionId: string, value: string) =>
    sendAsSlack(
      `${url}/v1/slack/interactions`,
      SIGNING_SECRET,
      buttonClick({ user, channel: CHANNEL, messageTs: m.ts, threadTs: m.thread_ts, actionId, value }),
      "application/x-www-form-urlencoded",
    ),
});

const inThread = (root: string) => [...s.slack.messages.values()].filter((m) => m.thread_ts === root);
const isApproval = (m: PostedMessage) => m.blocks?.some((b) => b.type === "actions") ?? false;

function approvalIn(root: string): Promise<PostedMessage> {
  return s.slack.waitFor(() => inThread(root).find(isApproval), `an approval message in thread ${root}`);
}

function callOf(m: PostedMessage): string {
  return (m.blocks!.find((x) => x.type === "actions")!.elements as { value: string }[])[0]!.value;
}

/** The node that drives the agent now, and the other one. */
async function nodes(): Promise<{ owner: string; other: string }> {
  const id = await s.p.agentId("triage");
  const detail = await waitFor(
    async () => (await s.p.apiOk<{ node?: string }>("GET", `/v1/agents/${id}`)).node,
    "the agent to have an owner",
  );
  return detail === "node-b" ? { owner: b, other: s.p.url } : { owner: s.p.url, other: b };
}

/** Lets both nodes sweep several times (four each, 200 ms apart), so anything done twice would show. */
const settle = () => sleep(800);

describe("Slack on a cluster of two daemons", () => {
  it("an event sent to one node and retried at the other (also as a message event) is queued once; its approval is posted once", async () => {
    const root = "1700000301.000100";
    const body = messageEvent({ channel: CHANNEL, user: SOMEONE, text: "<@U0BOTID> one", ts: root, event_id: "EvCLUSTER1" });
    const same = messageEvent({ type: "message", channel: CHANNEL, user: SOMEONE, text: "<@U0BOTID> one", ts: root });
    const answers = await Promise.all([atNode(s.p.url).event(body), atNode(b).event(body, 1), atNode(b).event(same)]);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    const m = await approvalIn(root);
    await settle();
    const id = await s.p.agentId("triage");
    const queued = (await s.p.events(id)).filter(
      (e: WireEvent) => short(e.type) === "message.queued" && e.data.conversation === `slack:${CHANNEL}:${root}`,
    );
    expect(queued).toHaveLength(1);
    expect(inThread(root)).toEqual([m]);
    expect(s.slack.callsOf("chat.postMessage").filter((c) => c.args.thread_ts === root)).toHaveLength(1);
  });

  it("a click at the node that does not drive the agent decides the call; the message and the reply are shown once", async () => {
    const root = "1700000302.000100";
    await atNode(b).event(messageEvent({ channel: CHANNEL, user: SOMEONE, text: "<@U0BOTID> two", ts: root }));
    const m = await approvalIn(root);
    const { other } = await nodes();
    expect((await atNode(other).click(APPROVER, m, "wardrik_approve", callOf(m))).status).toBe(200);
    await s.slack.waitFor(() => m.text.includes("Approved"), "the approval message to show the decision");
    expect(JSON.stringify(m.blocks)).toContain(`Approved by <@${APPROVER}>`);
    const reply = 'result: {"path":"notes/two.md","bytes":10}';
    await s.slack.waitFor(() => inThread(root).find((x) => x.text === reply), "the reply");
    await settle();
    expect(s.slack.callsOf("chat.update", m.ts)).toHaveLength(1);
    expect(inThread(root)).toHaveLength(2);
    expect(s.slack.callsOf("chat.postMessage").filter((c) => c.args.thread_ts === root)).toHaveLength(2);
  });

  it("what Slack refused is done once Slack is back, by one sweep of either node, without a restart", async () => {
    const root = "1700000303.000100";
    const id = await s.p.agentId("triage");
    // The waiting call cannot be posted...
    s.slack.failing.add("chat.postMessage");
    try {
      await atNode(s.p.url).event(messageEvent({ channel: CHANNEL, user: SOMEONE, text: "<@U0BOTID> three", ts: root }));
      await s.p.waitForEvent(id, (e) => short(e.type) === "approval.requested" && JSON.stringify(e.data.args).includes("three"));
      await s.slack.waitFor(
        () => s.slack.callsOf("chat.postMessage").filter((c) => c.args.thread_ts === root).length >= 2,
        "posts that fail",
      );
    } finally {
      s.slack.failing.clear();
    }
    const m = await approvalIn(root);
    // ...and then the decision cannot be shown.
    s.slack.failing.add("chat.update");
    try {
      expect((await atNode(b).click(APPROVER, m, "wardrik_approve", callOf(m))).status).toBe(200);
      await s.slack.waitFor(() => s.slack.callsOf("chat.update", m.ts).length >= 2, "updates that fail");
    } finally {
      s.slack.failing.clear();
    }
    await s.slack.waitFor(() => m.text.includes("Approved"), "a sweep to show the decision");
    // Whichever node swept, it names who clicked (kept in the database, not in the clicking node's memory).
    expect(JSON.stringify(m.blocks)).toContain(`Approved by <@${APPROVER}>`);
    await s.slack.waitFor(() => inThread(root).find((x) => x.text === 'result: {"path":"notes/three.md","bytes":10}'), "the reply");
    await settle();
    expect(inThread(root).filter(isApproval)).toHaveLength(0); // its buttons are gone: it shows the decision
    expect(inThread(root)).toHaveLength(2);
    expect(m.history.filter((t) => t.includes("Approved"))).toHaveLength(1);
  });
});
