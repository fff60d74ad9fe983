/**
 * A reply streamed into its Slack thread: posted with the first words, updated
 * as the model streams, never more than once a second, and finally the whole
 * reply. The model is a loopback OpenAI-compatible server that streams its
 * reply over a few seconds; Slack is the loopback stand-in.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { chunk, sse, startOpenAiLoopback, usageChunk } from "../helpers/openai-loopback.js";
import { agentFile } from "../helpers/spawn-daemon.js";
import { createSlackProject, type SlackProject } from "../helpers/slack-project.js";

let s: SlackProject;

const WORDS = ["The ", "deploy ", "at ", "09:14 ", "changed ", "the ", "billing ", "service's ", "retry ", "limits."];
const FULL = WORDS.join("");

beforeAll(async () => {
  // Ten pieces, 350 ms apart: the reply takes about three and a half seconds to arrive.
  const model = await startOpenAiLoopback(() => ({
    pauseMs: 350,
    pieces: sse([
      chunk({ role: "assistant", content: "" }),
      ...WORDS.map((w) => chunk({ content: w })),
      chunk({}, "stop"),
      usageChunk(20, 10),
    ]),
  }));
  s = await createSlackProject({
    models: { streamer: { provider: "openai-compatible", model: "loopback-model", base_url: model.baseUrl, api_key: "x" } },
    files: { "agents/triage.md": agentFile({ description: "Answers slowly", model: "streamer" }) },
  });
});

describe("streamed replies", () => {
  it("are posted with the first words and updated while they stream, at most once a second, ending with the whole reply", async () => {
    const root = "1700000201.000100";
    await s.mention("what changed today?", root);
    const reply = await s.slack.waitFor(
      () => [...s.slack.messages.values()].find((m) => m.thread_ts === root && m.text === FULL),
      "the whole reply in the thread",
    );
    const post = s.slack.callsOf("chat.postMessage").find((c) => c.args.thread_ts === root)!;
    const updates = s.slack.callsOf("chat.update", reply.ts);
    // Seen while streaming: the first post and at least one update held part of the reply.
    const partial = [post.args.text, ...updates.map((u) => u.args.text)].filter((t) => t !== FULL) as string[];
    expect(partial.length).toBeGreaterThanOrEqual(2);
    for (const t of partial) expect(FULL.startsWith(t)).toBe(true);
    expect(updates.at(-1)!.args.text).toBe(FULL);
    // Never two requests for this message within a second of each other.
    const times = [post.at, ...updates.map((u) => u.at)];
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!, `request ${i} came too soon`).toBeGreaterThanOrEqual(1000);
  });
});
