/**
 * `wardrik reload`: a new file adds an agent, an edited file updates it (same
 * ID, conversations kept), a deleted file removes it, a broken edit makes it
 * unreadable and a fix brings it back.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { AGENT_ID, agentFile, createProject, short, type TestProject } from "../helpers/spawn-daemon.js";

let p: TestProject;
let removedId = "";

beforeAll(async () => {
  p = await createProject({
    files: { "agents/keeper.md": agentFile({ description: "Keeps its history", model: "script/echo" }) },
    env: { ANTHROPIC_API_KEY: undefined },
  });
});

interface History {
  messages: { role: string; content: { text?: string } }[];
}

const names = async () => (await p.apiOk<{ agents: { name: string }[] }>("GET", "/v1/agents")).agents.map((a) => a.name).sort();

describe("wardrik reload", () => {
  it("adds an agent for a new file; it answers", async () => {
    p.write("agents/newbie.md", agentFile({ description: "Arrived by reload", model: "script/echo" }));
    const r = await p.cli(["reload"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/added newbie/);
    expect(r.stdout).toMatch(/updated none/);
    expect(r.stdout).toMatch(/removed none/);
    expect(await names()).toEqual(["helper", "keeper", "newbie"]);
    expect(await p.agentId("newbie")).toMatch(AGENT_ID);

    const { end } = await p.send("newbie", "hello newbie");
    expect(end.data.reply).toBe("You said: hello newbie");
  });

  it("an unchanged directory reloads to nothing", async () => {
    const r = await p.apiOk("POST", "/v1/reload", {});
    expect(r).toEqual({ added: [], updated: [], removed: [], unreadable: [], warnings: [], model_warnings: [], unreadable_reasons: [] });
  });

  it("updates an edited agent: same ID, conversation history kept, new definition used", async () => {
    const id = await p.agentId("keeper");
    const first = await p.send(id, "before the edit", "talk");
    expect(short(first.end.type)).toBe("turn.completed");

    p.write("agents/keeper.md", agentFile({ description: "Keeps its history (edited)", model: "script/echo", title: "Keeper v2" }));
    const r = await p.cli(["reload"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/added none; updated keeper; removed none/);
    expect(await p.agentId("keeper")).toBe(id);

    const second = await p.send(id, "after the edit", "talk");
    expect(second.end.data.reply).toBe("You said: after the edit");

    const h = await p.apiOk<History>("GET", `/v1/agents/${id}/conversations/talk/messages`);
    expect(h.messages.map((m) => `${m.role}: ${m.content.text ?? ""}`)).toEqual([
      "user: before the edit",
      "assistant: You said: before the edit",
      "user: after the edit",
      "assistant: You said: after the edit",
    ]);
    const d = await p.apiOk<{ description: string; title: string }>("GET", `/v1/agents/${id}`);
    expect(d.description).toBe("Keeps its history (edited)");
    expect(d.title).toBe("Keeper v2");
    const events = await p.events(id);
    expect(events.filter((e) => short(e.type) === "agent.updated")).toHaveLength(1);
  });

  it("a broken edit makes the agent unreadable (same ID); fixing the file brings it back with its history", async () => {
    const id = await p.agentId("keeper");
    p.write("agents/keeper.md", "---\ndescription: broken\nmax_iterations: -3\n---\n");
    const r = await p.cli(["reload"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/unreadable keeper/);
    const broken = await p.apiOk<{ id: string; status: string; reason: string }>("GET", `/v1/agents/${id}`);
    expect(broken.status).toBe("unreadable");
    expect(broken.reason).toMatch(/agents\/keeper\.md:3/);

    p.write("agents/keeper.md", agentFile({ description: "Fixed", model: "script/echo" }));
    const fixed = await p.apiOk<{ updated: string[] }>("POST", "/v1/reload", {});
    expect(fixed.updated).toEqual(["keeper"]);
    const again = await p.apiOk<{ id: string; status: string }>("GET", `/v1/agents/${id}`);
    expect(again.status).toBe("idle");
    const h = await p.apiOk<History>("GET", `/v1/agents/${id}/conversations/talk/messages`);
    expect(h.messages).toHaveLength(4);
  });

  it("says why an agent is unreadable, every problem of its file, and warns about a model without an API key", async () => {
    p.write("agents/typos.md", "---\ndescription: Typos\nmodle: demo\ntimeuot: 5\npolicy: carefull\n---\nHi.\n");
    p.write("agents/keyless.md", agentFile({ description: "A real provider, no key", model: "anthropic/claude-sonnet-4-5" }));
    const r = await p.cli(["reload"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("unreadable: typos:\n");
    expect(r.stdout).toMatch(/^ {2}agents\/typos\.md:3: key "modle" is not allowed: did you mean "model"\?/m);
    expect(r.stdout).toMatch(/^ {2}agents\/typos\.md:4: key "timeuot" is not allowed: did you mean "timeout"\?/m);
    // The policy it names is wrong too: said now, not after the keys are fixed.
    expect(r.stdout).toMatch(/^ {2}agents\/typos\.md:5: policy "carefull" does not exist \(policies\/ has default\)$/m);
    expect(r.stdout).toContain('warning: keyless: Model "anthropic/claude-sonnet-4-5" has no API key: set ANTHROPIC_API_KEY');
    p.remove("agents/typos.md");
    p.remove("agents/keyless.md");
    await p.apiOk("POST", "/v1/reload", {});
  });

  it("rereads scripts/: an edited script plays from the next turn", async () => {
    p.write("scripts/talker.yaml", 'steps:\n  - text: "first version"\n');
    p.write("agents/talker.md", agentFile({ description: "Plays a script", model: "script/talker" }));
    await p.apiOk("POST", "/v1/reload", {});
    expect((await p.send("talker", "hi")).end.data.reply).toBe("first version");
    p.write("scripts/talker.yaml", 'steps:\n  - text: "second version"\n');
    const r = await p.cli(["reload"]);
    expect(r.stdout).toContain("Reloaded agents/ and scripts/");
    expect((await p.send("talker", "hi again")).end.data.reply).toBe("second version");
  });

  it("removes the agent of a deleted file; its ID is gone", async () => {
    const id = await p.agentId("newbie");
    removedId = id;
    p.remove("agents/newbie.md");
    const r = await p.cli(["reload"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/added none; updated none; removed newbie/);
    expect(await names()).toEqual(["helper", "keeper", "talker"]);
    const gone = await p.api<{ code: string }>("GET", `/v1/agents/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.json.code).toBe("not_found");
  });

  it("a file added back later is a new agent with a new ID", async () => {
    p.write("agents/newbie.md", agentFile({ description: "Back again", model: "script/echo" }));
    const r = await p.apiOk<{ added: string[] }>("POST", "/v1/reload", {});
    expect(r.added).toEqual(["newbie"]);
    const id = await p.agentId("newbie");
    expect(id).toMatch(AGENT_ID);
    expect(id).not.toBe(removedId);
  });
});
