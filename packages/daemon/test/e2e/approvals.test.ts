/**
 * Approvals through the real CLI: `wardrik ask` shows which call waits and the
 * exact command that approves it; `wardrik approve` / `wardrik deny` decide it,
 * also across a daemon crash.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, short, type TestProject } from "../helpers/spawn-daemon.js";

let p: TestProject;

const SCRIPT = `steps:
  - tool_calls:
      - tool: files/write
        args: { path: "out/{{message}}.md", content: "written" }
  - text: "result: {{result}}"
`;
const POLICY = `description: Writes need a person.
rules:
  - tool: files/write
    decision: ask
    reason: Writing needs a person's OK.
  - tool: files/*
    decision: allow
`;

beforeAll(async () => {
  p = await createProject({
    scripts: { writer: SCRIPT },
    files: {
      "policies/careful.yaml": POLICY,
      ...Object.fromEntries(
        ["asker", "denier", "crasher"].map((n) => [
          `agents/${n}.md`,
          agentFile({ description: "Writes with approval", model: "writer", tools: ["files"], policy: "careful" }),
        ]),
      ),
    },
  });
});

/** Reads the call ID out of the approve command that `wardrik ask` printed. */
function approveCommand(stderr: string, agent: string): string | undefined {
  return new RegExp(`wardrik approve ${agent} (call_[0-9A-Z]{26})`).exec(stderr)?.[1];
}

describe("approvals through the CLI", () => {
  it("ask shows the waiting call and the approve command; ls attention lists the agent; approve runs the call", async () => {
    const ask = p.spawnCli(["ask", "asker", "one"]);
    await ask.waitForOutput((_out, err) => approveCommand(err, "asker") !== undefined, 30_000);
    expect(ask.stderr()).toContain("files/write waits for approval (Writing needs a person's OK.)");
    const call = approveCommand(ask.stderr(), "asker")!;
    const attention = await p.cli(["ls", "attention"]);
    expect(attention.stdout).toMatch(/asker\s+parked/);
    const show = await p.cli(["agent", "show", "asker"]);
    expect(show.stdout).toContain(`waiting: ${call} files/write`);
    const ok = await p.cli(["approve", "asker", call]);
    expect(ok.code).toBe(0);
    const done = await ask.done;
    expect(done.code).toBe(0);
    expect(done.stdout).toContain('result: {"path":"out/one.md","bytes":7}');
    const again = await p.cli(["approve", "asker", call]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/is not waiting for approval \(it is completed\)/);
  });

  it("deny --reason tells the model why, and the call never runs", async () => {
    const ask = p.spawnCli(["ask", "denier", "two"]);
    await ask.waitForOutput((_out, err) => approveCommand(err, "denier") !== undefined, 30_000);
    const call = approveCommand(ask.stderr(), "denier")!;
    expect((await p.cli(["deny", "denier", call, "--reason", "not in prod"])).code).toBe(0);
    const done = await ask.done;
    expect(done.code).toBe(0);
    expect(done.stdout).toContain("A person refused this call: not in prod");
    const id = await p.agentId("denier");
    const events = await p.events(id);
    expect(events.some((e) => short(e.type) === "call.completed")).toBe(false);
    expect(events.find((e) => short(e.type) === "approval.denied")?.data.reason).toBe("not in prod");
  });

  it("an approval survives a daemon crash: park, kill -9, restart, approve, the turn finishes", async () => {
    const id = await p.agentId("crasher");
    const queued = await p.apiOk<{ message: string }>("POST", `/v1/agents/${id}/messages`, { text: "three" });
    const asked = await p.waitForEvent(id, (e) => short(e.type) === "approval.requested");
    await p.waitForEvent(id, (e) => short(e.type) === "turn.parked");
    await p.kill();
    await p.start();
    const ls = await p.cli(["ls", "attention"]);
    expect(ls.stdout).toMatch(/crasher\s+parked/);
    expect((await p.cli(["approve", "crasher", String(asked.data.call)])).code).toBe(0);
    const end = await p.waitForTurnEnd(id, String(asked.run));
    expect(short(end.type)).toBe("turn.completed");
    expect(end.data.reply).toBe('result: {"path":"out/three.md","bytes":7}');
    expect(queued.message).toMatch(/^msg_/);
  });
});
