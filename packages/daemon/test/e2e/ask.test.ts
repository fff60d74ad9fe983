/** `wardrik ask` against the example project of `wardrik init`: reply, progress, --json, --no-wait, --conversation. */
import { beforeAll, describe, expect, it } from "vitest";
import { createProject, runOfMessage, short, type TestProject } from "../helpers/spawn-daemon.js";

let p: TestProject;
let helperId: string;

beforeAll(async () => {
  p = await createProject();
  helperId = await p.agentId("helper");
});

const demoReply = (msg: string) => `I saved your question in notes/last-question.md. Reading it back: "${msg}"`;

interface History {
  messages: { seq: number; role: string; run?: string; content: { text?: string } }[];
}

describe("wardrik ask", () => {
  it("prints the reply on stdout and the tool calls on stderr, exit 0", async () => {
    const r = await p.cli(["ask", "helper", "What is 2+2?"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(demoReply("What is 2+2?") + "\n");
    const progress = r.stderr.split("\n").filter(Boolean);
    expect(progress).toEqual([expect.stringMatching(/files\/write \(call_[0-9A-Z]{26}\)/), expect.stringMatching(/files\/read \(call_[0-9A-Z]{26}\)/)]);
  });

  it("--json prints the turn: completed, the reply, the calls", async () => {
    const r = await p.cli(["ask", "helper", "json please", "--json"]);
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
    expect(turn.agent).toBe(helperId);
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
    const api = await p.apiOk<{ status: string; reply: string }>("GET", `/v1/agents/${helperId}/turns/${turn.id}`);
    expect(api.status).toBe("completed");
    expect(api.reply).toBe(turn.reply);
  });

  it("--no-wait only queues (exit 0, nothing on stdout), and the turn then completes", async () => {
    const r = await p.cli(["ask", "helper", "later is fine", "--no-wait"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("");
    const m = /Queued (msg_[0-9A-Z]{26})/.exec(r.stderr);
    expect(m, r.stderr).not.toBeNull();
    const message = m![1]!;
    const started = await p.waitForEvent(helperId, (e) => short(e.type) === "turn.started" && (e.data.messages as string[]).includes(message));
    const end = await p.waitForTurnEnd(helperId, started.run!);
    expect(short(end.type)).toBe("turn.completed");
    expect(end.data.reply).toBe(demoReply("later is fine"));
  });

  it("--no-wait --json prints the queued message as JSON", async () => {
    const r = await p.cli(["ask", "helper", "queued json", "--no-wait", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const q = JSON.parse(r.stdout) as { queued: boolean; message: string; conversation: string; seq: number };
    expect(q.queued).toBe(true);
    expect(q.message).toMatch(/^msg_/);
    expect(q.conversation).toBe("main");
    const ev = await p.waitForEvent(helperId, (e) => e.seq === q.seq);
    expect(short(ev.type)).toBe("message.queued");
    expect(ev.data.text).toBe("queued json");
    const started = await p.waitForEvent(helperId, (e) => runOfMessage([e], q.message) !== undefined);
    expect(short((await p.waitForTurnEnd(helperId, started.run!)).type)).toBe("turn.completed");
  });

  it("--conversation keeps a history separate from main", async () => {
    const r = await p.cli(["ask", "helper", "only in C1", "--conversation", "C1"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(demoReply("only in C1"));

    const c1 = await p.cli(["history", "helper", "--conversation", "C1", "--json"]);
    expect(c1.code, c1.stderr).toBe(0);
    const h1 = JSON.parse(c1.stdout) as History;
    const users1 = h1.messages.filter((m) => m.role === "user").map((m) => m.content.text);
    expect(users1).toEqual(["only in C1"]);
    // user, assistant(call), tool, assistant(call), tool, assistant(reply)
    expect(h1.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool", "assistant"]);

    const main = await p.apiOk<History>("GET", `/v1/agents/${helperId}/conversations/main/messages`);
    const usersMain = main.messages.filter((m) => m.role === "user").map((m) => m.content.text);
    expect(usersMain).toContain("What is 2+2?");
    expect(usersMain).not.toContain("only in C1");

    // The text form of history names the roles.
    const text = await p.cli(["history", "helper", "--conversation", "C1"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/user: only in C1/);

    // The conversation is listed.
    const convs = await p.apiOk<{ conversations: { key: string }[] }>("GET", `/v1/agents/${helperId}/conversations`);
    expect(convs.conversations.map((c) => c.key).sort()).toEqual(["C1", "main"]);
  });

  it("a second message in C1 sees the first: the model gets the conversation's history", async () => {
    const r = await p.cli(["ask", "helper", "second in C1", "--conversation", "C1", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const turn = JSON.parse(r.stdout) as { id: string };
    const events = await p.events(helperId);
    const called = events.filter((e) => e.run === turn.id && short(e.type) === "model.called");
    // First model call of the second turn: the first turn's 6 messages plus the new user message.
    expect(called[0]!.data.messages).toBeGreaterThanOrEqual(7);
  });

  it("an unknown agent is exit 1 with the agents that exist", async () => {
    const r = await p.cli(["ask", "nobody", "hi"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/No agent nobody/);
    expect(r.stderr).toMatch(/helper/);
  });
});
