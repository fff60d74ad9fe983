/**
 * A Slack post whose answer the daemon never stored: the loopback Slack posts
 * the message, then kills the daemon (SIGKILL) before its answer leaves, as a
 * node dying between Slack's answer and storing the message's ts would. The
 * restarted daemon finds the message in the thread by its metadata and takes
 * it as posted: Slack shows it once. When the thread cannot be read, the
 * message is posted again and that possible duplicate is counted, on the
 * message's record and in the metrics.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { projectDatabaseUrl } from "../helpers/database-contents.js";
import { parsePrometheusText, sampleValue } from "../helpers/prometheus-text.js";
import { withSideConnection } from "../helpers/side-connection.js";
import { short, waitFor } from "../helpers/spawn-daemon.js";
import type { PostedMessage, SlackApiCall } from "../helpers/slack-loopback.js";
import { APPROVER, createSlackProject, NOTE_WRITER, type SlackProject } from "../helpers/slack-project.js";

let s: SlackProject;

beforeAll(async () => {
  s = await createSlackProject({
    ...NOTE_WRITER,
    // The sweep finds the post whose answer was lost soon after the restart; a reply is updated 100 ms after its
    // last update (slack-streaming checks Slack's second), and a reply left without its last word is the sweep's
    // 1 s after its turn ended, not 5 s.
    env: { WARDRIK_SLACK_SWEEP_MS: "200", WARDRIK_SLACK_UPDATE_MS: "100", WARDRIK_SLACK_REPLY_GRACE_MS: "1000" },
  });
});

const inThread = (root: string) => [...s.slack.messages.values()].filter((m) => m.thread_ts === root);
/** An approval message (Block Kit), open or decided; a reply has no blocks. */
const isApproval = (m: PostedMessage) => (m.blocks?.length ?? 0) > 0;
const callOf = (m: PostedMessage) => (m.blocks!.find((b) => b.type === "actions")!.elements as { value: string }[])[0]!.value;

/**
 * The daemon dies once Slack has posted the first message in `root` that `which` picks, before Slack's answer reaches
 * it; when `after` is given, Slack holds its answer and the kill until `after` settles (a click the test waits on).
 */
async function killOnPost(root: string, which: (c: SlackApiCall) => boolean, after?: Promise<unknown>): Promise<void> {
  const pid = s.p.child!.pid!;
  s.slack.onCall = (c) => {
    if (c.method !== "chat.postMessage" || c.args.thread_ts !== root || !which(c)) return;
    s.slack.onCall = undefined;
    return Promise.resolve(after).then(() => process.kill(pid, "SIGKILL"));
  };
  await waitFor(() => s.p.child === undefined, "the daemon to be killed by the loopback Slack", 60_000);
}

async function possibleDuplicates(kind: string, ref: string): Promise<number> {
  const url = projectDatabaseUrl(s.p.dir, s.p.read("config.yaml"));
  return withSideConnection(url, async (db) => {
    const rows = await db.all<{ n: number }>("SELECT possible_duplicates AS n FROM slack_messages WHERE kind = ? AND ref = ?", [kind, ref]);
    return Number(rows[0]?.n ?? -1);
  });
}

async function repeatsMetric(): Promise<number> {
  const r = await s.p.api("GET", "/metrics");
  return sampleValue(parsePrometheusText(r.text), "wardrik_possible_repeats_total", { effect: "slack_post" });
}

describe("a Slack post whose answer was lost with its node", () => {
  it("an approval message: the restarted daemon finds it in the thread and does not post it again", async () => {
    const root = "1700000201.000100";
    const killed = killOnPost(root, (c) => Array.isArray(c.args.blocks));
    await s.mention("alpha", root);
    await killed;
    expect(inThread(root).filter(isApproval)).toHaveLength(1);
    await s.p.start();
    const m = inThread(root).find(isApproval)!;
    const call = callOf(m);
    // Taken as posted: a click on the one message decides the call, and that message shows it.
    const click = await waitFor(async () => {
      const r = await s.click(APPROVER, m.ts, "wardrik_approve", call);
      return r.status === 200 ? r : undefined;
    }, "the restarted daemon to take the click");
    expect(click.status).toBe(200);
    await s.slack.waitFor(() => m.text.includes("Approved"), "the one approval message to show the approval");
    await s.slack.waitFor(() => inThread(root).find((x) => x.text.startsWith("result:")), "the reply");
    expect(inThread(root).filter(isApproval)).toHaveLength(1);
    expect(await possibleDuplicates("approval", call)).toBe(0);
  });

  it("a reply: found in the thread after the restart, and given the turn's final text there", async () => {
    const root = "1700000202.000100";
    await s.mention("beta", root);
    const approval = await s.slack.waitFor(() => inThread(root).find(isApproval), "the approval message");
    // The reply may be posted before the click is answered: Slack holds the reply's answer until then, so the kill
    // cannot cut the click short.
    let clickAnswered!: () => void;
    const killed = killOnPost(root, (c) => !Array.isArray(c.args.blocks), new Promise<void>((r) => (clickAnswered = r)));
    const click = await s.click(APPROVER, approval.ts, "wardrik_approve", callOf(approval)).finally(() => clickAnswered());
    expect(click.status).toBe(200);
    await killed;
    await s.p.start();
    const id = await s.p.agentId("triage");
    await s.p.waitForEvent(id, (e) => short(e.type) === "turn.completed" && String(e.data.reply).includes("beta"));
    const replies = () => inThread(root).filter((x) => !isApproval(x));
    await s.slack.waitFor(() => replies().find((x) => x.text === 'result: {"path":"notes/beta.md","bytes":10}'), "the final reply text");
    expect(replies()).toHaveLength(1);
  });

  it("when the thread cannot be read, the message is posted again and the possible duplicate is counted", async () => {
    const root = "1700000203.000100";
    const before = await repeatsMetric();
    const killed = killOnPost(root, (c) => Array.isArray(c.args.blocks));
    await s.mention("gamma", root);
    await killed;
    s.slack.failing.add("conversations.replies");
    try {
      await s.p.start();
      await s.slack.waitFor(() => inThread(root).filter(isApproval).length === 2, "the approval posted again");
    } finally {
      s.slack.failing.clear();
    }
    const call = callOf(inThread(root).find(isApproval)!);
    expect(await possibleDuplicates("approval", call)).toBe(1);
    expect((await repeatsMetric()) - before).toBe(1);
  });
});
