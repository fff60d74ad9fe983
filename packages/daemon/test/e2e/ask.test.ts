/**
 * `wardrik ask` against the example project of `wardrik init`: reply, progress,
 * --json, --no-wait, --conversation.
 *
 * The tests run at once, each with its own copy of the example agent: the demo
 * script writes and reads back one file, and an agent's conversations share its
 * files, so two conversations of one agent at once would read each other's notes.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createProject, runOfMessage, short, type TestProject } from "../helpers/spawn-daemon.js";

let p: TestProject;
let ids: Record<string, string>;

const COPIES = ["json_helper", "nowait_helper", "nowait_json_helper", "conv_helper"];

beforeAll(async () => {
  p = await createProject({ start: false });
  const example = p.read("agents/helper.md");
  for (const name of COPIES) p.write(`agents/${name}.md`, example);
  await p.start();
  const agents = await p.apiOk<{ agents: { id: string; name: string }[] }>("GET", "/v1/agents");
  ids = Object.fromEntries(agents.agents.map((a) => [a.name, a.id]));
});

const demoReply = (msg: string) => `I saved your question in notes/last-question.md. Reading it back: "${msg}"`;

interface History {
  messages: { seq: number; role: string; run?: string; content: { text?: string } }[];
}

describe.concurrent("wardrik ask", () => {
  it("prints the reply on stdout; on stderr one line per state, the tool calls and a summary; exit 0", async () => {
    const r = await p.cli(["ask", "helper", "What is 2+2?"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(demoReply("What is 2+2?") + "\n");
    const progress = r.stderr.split("\n").filter(Boolean);
    // Not a terminal: no status line to rewrite, no control characters.
    expect(r.stderr).not.toMatch(/\r|\x1b/);
    expect(progress).toEqual([
      "… waiting for the model (demo)",
      expect.stringMatching(/^→ files\/write \(call_[0-9A-Z]{26}\)$/),
      "… waiting for the model (demo)",
      expect.stringMatching(/^→ files\/read \(call_[0-9A-Z]{26}\)$/),
      "… waiting for the model (demo)",
      expect.stringMatching(/^✓ completed in [\d.]+ m?s · 3 model calls · [\d,]+ tokens in, [\d,]+ out · \$0\.0000$/),
    ]);
    // The summary adds up the turn's model.replied events.
    const id = ids.helper!;
    const replies = (await p.events(id)).filter((e) => short(e.type) === "model.replied");
    const input = replies.reduce((n, e) => n + Number(e.data.input_tokens), 0);
    const output = replies.reduce((n, e) => n + Number(e.data.output_tokens), 0);
    expect(progress.at(-1)).toContain(`${input.toLocaleString("en-US")} tokens in, ${output.toLocaleString("en-US")} out`);
  });

  it("--json prints the turn: completed, the reply, the calls", async () => {
    const r = await p.cli(["ask", "json_helper", "json please", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const turn = JSON.parse(r.stdout) as {
      id: string;
      agent: string;
      conversation: string;
      status: string;
      reply: string;
      iterations: number;
      messages: string[];
      calls: { id: string; tool: string; status: string; round: number }[];
    };
    expect(turn.id).toMatch(/^run_[0-9A-Z]{26}$/);
    expect(turn.agent).toBe(ids.json_helper);
    expect(turn.conversation).toBe("main");
    expect(turn.status).toBe("completed");
    expect(turn.reply).toBe(demoReply("json please"));
    expect(turn.iterations).toBe(3);
    expect(turn.messages).toHaveLength(1);
    expect(turn.calls.map((c) => [c.tool, c.status, c.round])).toEqual([
      ["files/write", "completed", 1],
      ["files/read", "completed", 2],
    ]);
    // The same turn through the API.
    const api = await p.apiOk<{ status: string; reply: string }>("GET", `/v1/agents/${ids.json_helper}/turns/${turn.id}`);
    expect(api.status).toBe("completed");
    expect(api.reply).toBe(turn.reply);
  });

  it("--no-wait only queues (exit 0, nothing on stdout), and the turn then completes", async () => {
    const id = ids.nowait_helper!;
    const r = await p.cli(["ask", "nowait_helper", "later is fine", "--no-wait"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("");
    const m = /Queued (msg_[0-9A-Z]{26})/.exec(r.stderr);
    expect(m, r.stderr).not.toBeNull();
    const message = m![1]!;
    const started = await p.waitForEvent(id, (e) => short(e.type) === "turn.started" && (e.data.messages as string[]).includes(message));
    const end = await p.waitForTurnEnd(id, started.run!);
    expect(short(end.type)).toBe("turn.completed");
    expect(end.data.reply).toBe(demoReply("later is fine"));
  });

  it("--no-wait --json prints the queued message as JSON", async () => {
    const id = ids.nowait_json_helper!;
    const r = await p.cli(["ask", "nowait_json_helper", "queued json", "--no-wait", "--json", "--conversation", "q"]);
    expect(r.code, r.stderr).toBe(0);
    const q = JSON.parse(r.stdout) as { queued: boolean; message: string; conversation: string; seq: number };
    expect(q.queued).toBe(true);
    expect(q.message).toMatch(/^msg_/);
    expect(q.conversation).toBe("q");
    const ev = await p.waitForEvent(id, (e) => e.seq === q.seq);
    expect(short(ev.type)).toBe("message.queued");
    expect(ev.data.text).toBe("queued json");
    const started = await p.waitForEvent(id, (e) => runOfMessage([e], q.message) !== undefined);
    expect(short((await p.waitForTurnEnd(id, started.run!)).type)).toBe("turn.completed");
  });

  it("--conversation keeps a history separate from main, and the model gets that conversation's history", async () => {
    const id = ids.conv_helper!;
    const inMain = await p.send(id, "only in main");
    expect(inMain.end.data.reply).toBe(demoReply("only in main"));

    const r = await p.cli(["ask", "conv_helper", "only in C1", "--conversation", "C1"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(demoReply("only in C1"));

    const c1 = await p.cli(["history", "conv_helper", "--conversation", "C1", "--json"]);
    expect(c1.code, c1.stderr).toBe(0);
    const h1 = JSON.parse(c1.stdout) as History;
    expect(h1.messages.filter((m) => m.role === "user").map((m) => m.content.text)).toEqual(["only in C1"]);
    // user, assistant(call), tool, assistant(call), tool, assistant(reply)
    expect(h1.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool", "assistant"]);

    const main = await p.apiOk<History>("GET", `/v1/agents/${id}/conversations/main/messages`);
    expect(main.messages.filter((m) => m.role === "user").map((m) => m.content.text)).toEqual(["only in main"]);

    const convs = await p.apiOk<{ conversations: { key: string }[] }>("GET", `/v1/agents/${id}/conversations`);
    expect(convs.conversations.map((c) => c.key).sort()).toEqual(["C1", "main"]);

    // A second message in C1: its first model call carries C1's six messages, the new one and the system prompt.
    const second = await p.send(id, "second in C1", "C1");
    const called = (await p.events(id)).filter((e) => e.run === second.run && short(e.type) === "model.replied");
    expect(called[0]!.data.messages).toBe(8);
  });

  it("an unknown agent is exit 1 with the agents that exist", async () => {
    const r = await p.cli(["ask", "nobody", "hi"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/No agent nobody/);
    expect(r.stderr).toMatch(/helper/);
  });
});
