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
// Writes the message itself: a long message makes long arguments.
const LONG_SCRIPT = `steps:
  - tool_calls:
      - tool: files/write
        args: { path: "long.md", content: "{{message}}" }
  - text: "done"
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
    scripts: { writer: SCRIPT, long_writer: LONG_SCRIPT },
    files: {
      "policies/careful.yaml": POLICY,
      "agents/detailer.md": agentFile({ description: "Writes long files", model: "long_writer", tools: ["files"], policy: "careful" }),
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
    expect(ask.stderr()).toContain("⏸ files/write waits for approval: Writing needs a person's OK. (rule: policies/careful.yaml:3)");
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

  it("what is approved: the tool, its arguments (long values cut with a note) and the policy reason, in ask, agent show and the event", async () => {
    const long = "x".repeat(1434);
    const ask = p.spawnCli(["ask", "detailer", long]);
    await ask.waitForOutput((_out, err) => approveCommand(err, "detailer") !== undefined, 30_000);
    const call = approveCommand(ask.stderr(), "detailer")!;
    const waiting = ask.stderr();
    expect(waiting).toContain("⏸ files/write waits for approval: Writing needs a person's OK. (rule: policies/careful.yaml:3)");
    expect(waiting).toContain(`   call:    ${call}`);
    // Pretty-printed, one key a line, the long value cut with how much is left out.
    expect(waiting).toContain('   args:    {\n              "path": "long.md",\n');
    expect(waiting).toContain(`"content": "${"x".repeat(200)}"… (1,234 more characters)`);
    expect(waiting).not.toContain("x".repeat(201));
    expect(waiting).toContain(`   deny:    wardrik deny detailer ${call} --reason "..."`);

    const show = await p.cli(["agent", "show", "detailer"]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain(`  waiting: ${call} files/write — Writing needs a person's OK.`);
    expect(show.stdout).toContain("    rule:    policies/careful.yaml:3");
    expect(show.stdout).toContain('    args:    {\n               "path": "long.md",');
    expect(show.stdout).toContain("… (1,234 more characters)");

    const json = await p.cli(["agent", "show", "detailer", "--json"]);
    const detail = JSON.parse(json.stdout) as { waiting_calls: unknown[] };
    // JSON carries the arguments whole.
    expect(detail.waiting_calls).toEqual([
      {
        call,
        tool: "files/write",
        run: expect.stringMatching(/^run_/),
        args: { path: "long.md", content: long },
        reason: "Writing needs a person's OK.",
        rule: "policies/careful.yaml:3",
      },
    ]);

    const requested = await p.waitForEvent("detailer", (e) => short(e.type) === "approval.requested");
    expect(requested.data).toMatchObject({
      call,
      tool: "files/write",
      args: { path: "long.md", content: long },
      reason: "Writing needs a person's OK.",
      rule: "policies/careful.yaml:3",
    });

    const approved = await p.cli(["approve", "detailer", call, "--json"]);
    expect(JSON.parse(approved.stdout)).toEqual({ call, status: expect.any(String), tool: "files/write" });
    expect((await ask.done).code).toBe(0);
  });
});
