/**
 * Approvals in Slack threads against the real daemon: a waiting call is
 * posted as Block Kit with Approve and Deny; an approver's click decides it
 * and the message shows who and when; anyone else is told privately and
 * nothing changes; a decision made through the CLI updates the message too,
 * and so does one made after a daemon restart. A question an agent asks
 * (person/ask) is posted in the thread and an approver's reply answers it.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { agentFile, short } from "../helpers/spawn-daemon.js";
import { messageEvent, type PostedMessage } from "../helpers/slack-loopback.js";
import { APPROVER, CHANNEL, createSlackProject, NOTE_WRITER, SOMEONE, type SlackProject } from "../helpers/slack-project.js";

let s: SlackProject;
/** The channel of the agent that asks questions. */
const QUESTIONS = "C0QUESTION";

beforeAll(async () => {
  s = await createSlackProject({
    scripts: {
      ...NOTE_WRITER.scripts,
      asking: `steps:
  - tool_calls:
      - tool: person/ask
        args: { question: "Restart {{message}}?", choices: ["yes", "no"] }
  - text: "answer: {{result}}"
`,
    },
    files: { ...NOTE_WRITER.files, "agents/curious.md": agentFile({ description: "Asks in Slack", model: "asking", tools: ["person"] }) },
    channels: { [CHANNEL]: "triage", [QUESTIONS]: "curious" },
  });
});

/** The approval message posted in a thread: the one with buttons. */
function approvalIn(threadTs: string): Promise<PostedMessage> {
  return s.slack.waitFor(
    () => [...s.slack.messages.values()].find((m) => m.thread_ts === threadTs && m.blocks?.some((b) => b.type === "actions")),
    `an approval message in thread ${threadTs}`,
  );
}

const buttons = (m: PostedMessage) =>
  (m.blocks!.find((b) => b.type === "actions")!.elements as { action_id: string; value: string; text: { text: string } }[]).map((e) => ({
    action: e.action_id,
    label: e.text.text,
    value: e.value,
  }));

const blockText = (m: PostedMessage) => JSON.stringify(m.blocks);

async function callStatus(callId: string): Promise<string> {
  const id = await s.p.agentId("triage");
  const events = await s.p.events(id);
  const last = events.filter((e) => e.data.call === callId).at(-1);
  return short(last!.type);
}

describe("approvals in Slack", () => {
  it("posts the waiting call with tool, arguments, reason and buttons; a non-approver is refused privately; an approver approves", async () => {
    const root = "1700000101.000100";
    await s.mention("alpha", root);
    const m = await approvalIn(root);
    expect(m.channel).toBe(CHANNEL);
    const text = blockText(m);
    expect(text).toContain("`files/write`");
    expect(text).toContain('\\"path\\": \\"notes/alpha.md\\"');
    expect(text).toContain("Why it needs approval: Writing needs a person's OK.");
    const id = await s.p.agentId("triage");
    const requested = await s.p.waitForEvent(id, (e) => short(e.type) === "approval.requested" && e.data.args !== undefined);
    const callId = String(requested.data.call);
    expect(buttons(m)).toEqual([
      { action: "wardrik_approve", label: "Approve", value: callId },
      { action: "wardrik_deny", label: "Deny", value: callId },
    ]);

    // Someone who is not an approver: an ephemeral message, and nothing changes.
    const refused = await s.click(SOMEONE, m.ts, "wardrik_approve", callId);
    expect(refused.status).toBe(200);
    const ephemeral = s.slack.callsOf("chat.postEphemeral").at(-1)!;
    expect(ephemeral.args).toMatchObject({
      channel: CHANNEL,
      user: SOMEONE,
      text: expect.stringMatching(/^You are not allowed to approve or deny calls/),
    });
    expect(await callStatus(callId)).toBe("approval.requested");
    expect(s.slack.callsOf("chat.update", m.ts)).toHaveLength(0);
    const attention = await s.p.cli(["ls", "attention"]);
    expect(attention.stdout).toMatch(/triage\s+parked/);

    // The approver: the call runs, the message shows who decided and when, without buttons.
    const before = Date.now();
    expect((await s.click(APPROVER, m.ts, "wardrik_approve", callId)).status).toBe(200);
    await s.slack.waitFor(() => m.text.includes("Approved"), "the approval message to show the decision");
    expect(blockText(m)).toContain(`Approved by <@${APPROVER}> at <!date^`);
    const iso = /\|(\d{4}-\d\d-\d\dT[^>]+)>/.exec(blockText(m))![1]!;
    expect(Date.parse(iso)).toBeGreaterThanOrEqual(before - 1000);
    expect(m.blocks!.some((b) => b.type === "actions")).toBe(false);
    await s.slack.waitFor(
      () => [...s.slack.messages.values()].find((x) => x.thread_ts === root && x.text.startsWith("result:")),
      "the reply",
    );
    const end = await s.p.waitForTurnEnd(id, String(requested.run));
    expect(end.data.reply).toBe('result: {"path":"notes/alpha.md","bytes":10}');

    // A second click on a decided call changes nothing and says why, privately.
    await s.click(APPROVER, m.ts, "wardrik_deny", callId);
    expect(s.slack.callsOf("chat.postEphemeral").at(-1)!.args).toMatchObject({
      user: APPROVER,
      text: expect.stringMatching(/is not waiting for approval/),
    });
  });

  it("Deny from Slack tells the model who refused", async () => {
    const root = "1700000102.000100";
    await s.mention("beta", root);
    const m = await approvalIn(root);
    const callId = buttons(m)[0]!.value;
    await s.click(APPROVER, m.ts, "wardrik_deny", callId);
    await s.slack.waitFor(() => m.text.includes("Denied"), "the message to show the denial");
    expect(blockText(m)).toContain(`Denied by <@${APPROVER}>`);
    const refusal = `result: A person refused this call: Denied in Slack by user ${APPROVER}.`;
    await s.slack.waitFor(() => [...s.slack.messages.values()].find((x) => x.thread_ts === root && x.text === refusal), "the reply");
  });

  it("a decision made through the CLI updates the Slack message", async () => {
    const root = "1700000103.000100";
    await s.mention("gamma", root);
    const m = await approvalIn(root);
    const callId = buttons(m)[0]!.value;
    const r = await s.p.cli(["deny", "triage", callId, "--reason", "not from the CLI either"]);
    expect(r.code, r.stderr).toBe(0);
    await s.slack.waitFor(() => m.text.includes("Denied"), "the message to show the CLI's denial");
    expect(blockText(m)).toContain("Denied outside Slack (CLI, API or console)");
    expect(m.blocks!.some((b) => b.type === "actions")).toBe(false);
  });

  it("after a daemon restart, the message posted before is the one an approval from Slack updates", async () => {
    const root = "1700000104.000100";
    await s.mention("delta", root);
    const m = await approvalIn(root);
    const callId = buttons(m)[0]!.value;
    const id = await s.p.agentId("triage");
    const asked = await s.p.waitForEvent(id, (e) => short(e.type) === "approval.requested" && e.data.call === callId);
    await s.p.waitForEvent(id, (e) => short(e.type) === "turn.parked" && e.run === asked.run);
    await s.p.kill();
    await s.p.start();
    expect((await s.click(APPROVER, m.ts, "wardrik_approve", callId)).status).toBe(200);
    await s.slack.waitFor(() => m.text.includes("Approved"), "the message posted before the restart to show the approval");
    await s.slack.waitFor(
      () => [...s.slack.messages.values()].find((x) => x.thread_ts === root && x.text === 'result: {"path":"notes/delta.md","bytes":10}'),
      "the reply after the restart",
    );
    // Posted once: the restart did not post the waiting call again.
    expect([...s.slack.messages.values()].filter((x) => x.thread_ts === root && x.blocks?.length)).toHaveLength(1);
  });

  it("a waiting call Slack could not be told about is posted when the daemon starts again", async () => {
    const root = "1700000105.000100";
    const id = await s.p.agentId("triage");
    s.slack.failing.add("chat.postMessage");
    try {
      await s.mention("epsilon", root);
      const asked = await s.p.waitForEvent(
        id,
        (e) => short(e.type) === "approval.requested" && JSON.stringify(e.data.args).includes("epsilon"),
      );
      await s.slack.waitFor(() => s.slack.callsOf("chat.postMessage").some((c) => c.args.thread_ts === root), "the post that fails");
      expect(asked.data.tool).toBe("files/write");
    } finally {
      s.slack.failing.clear();
    }
    expect([...s.slack.messages.values()].some((m) => m.thread_ts === root)).toBe(false);
    await s.p.restart();
    const m = await approvalIn(root);
    await s.click(APPROVER, m.ts, "wardrik_approve", buttons(m)[0]!.value);
    await s.slack.waitFor(
      () => [...s.slack.messages.values()].find((x) => x.thread_ts === root && x.text === 'result: {"path":"notes/epsilon.md","bytes":10}'),
      "the reply",
    );
  });
});

describe("questions in Slack", () => {
  it("posts the question with its choices; a non-approver's reply is refused privately, a wrong choice is explained, an approver's reply answers it", async () => {
    const root = "1700000201.000100";
    const say = (user: string, text: string, ts: string) =>
      s.event(messageEvent({ type: "message", channel: QUESTIONS, user, text, ts, thread_ts: root }));
    await s.event(messageEvent({ channel: QUESTIONS, user: SOMEONE, text: "<@U0BOTID> the web", ts: root }));
    const m = await s.slack.waitFor(
      () => [...s.slack.messages.values()].find((x) => x.thread_ts === root && x.text.startsWith("curious asks")),
      "the question in the thread",
    );
    expect(m.text).toBe("curious asks: Restart the web?");
    expect(blockText(m)).toContain("Reply in this thread with one of: `yes`, `no`");
    const id = await s.p.agentId("curious");
    const asked = await s.p.waitForEvent(id, (e) => short(e.type) === "question.asked");

    await say(SOMEONE, "yes", "1700000201.000200");
    await s.slack.waitFor(
      () =>
        s.slack
          .callsOf("chat.postEphemeral")
          .find((c) => c.args.user === SOMEONE && String(c.args.text).includes("answer the agent's questions")),
      "the refusal",
    );
    await say(APPROVER, "perhaps", "1700000201.000300");
    await s.slack.waitFor(
      () =>
        s.slack
          .callsOf("chat.postEphemeral")
          .find((c) => c.args.user === APPROVER && String(c.args.text).includes('answer one of: "yes", "no"')),
      "the list of choices",
    );
    await say(APPROVER, "yes", "1700000201.000400");
    const end = await s.p.waitForTurnEnd(id, String(asked.run));
    expect(end.data.reply).toBe('answer: {"answer":"yes"}');
    const answered = (await s.p.events(id)).filter((e) => short(e.type) === "question.answered");
    expect(answered.map((e) => e.data)).toEqual([{ call: asked.data.call, tool: "person/ask", answer: "yes", by: `slack:${APPROVER}` }]);
    await s.slack.waitFor(() => m.text.includes("Answered"), "the question to show its answer");
    expect(blockText(m)).toContain(`Answered by <@${APPROVER}> at <!date^`);
    // The replies answered the question; none of them was queued as a message of its own.
    expect((await s.p.events(id)).filter((e) => short(e.type) === "message.queued")).toHaveLength(1);
  });
});
