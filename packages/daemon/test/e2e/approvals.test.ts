/**
 * Approvals through the real CLI: `wardrik ask` shows which call waits and the
 * exact command that approves it; `wardrik approve` / `wardrik deny` decide it,
 * also across a daemon crash. Questions to a person (person/ask) park the
 * same way and are answered with `wardrik answer` or the HTTP route.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, short, type TestProject } from "../helpers/spawn-daemon.js";
import { cappedPolicy } from "../helpers/capped-policy.js";

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

const QUESTION = `steps:
  - tool_calls:
      - tool: person/ask
        args: { question: "Which region for {{message}}?" }
  - text: "answer: {{result}}"
`;
const CHOICE = `steps:
  - tool_calls:
      - tool: person/ask
        args: { question: "Roll back {{message}}?", choices: ["roll back", "wait"] }
  - text: "answer: {{result}}"
`;
const NO_QUESTIONS = `description: Nobody is to be asked.
rules:
  - tool: person/ask
    decision: deny
    reason: Decide alone.
`;
// $0.30 before the question and $0.30 after it, against a cap of $0.50: the second reply's calls are refused, as they are only
// while the first reply's spend still counts (across the park, a restart and the answer).
const COSTLY_QUESTION = `steps:
  - tool_calls:
      - tool: person/ask
        args: { question: "Go on?" }
    usage: { input: 300000, output: 0 }
  - tool_calls:
      - tool: person/ask
        args: { question: "And then?" }
    usage: { input: 300000, output: 0 }
`;
const CAPPED = cappedPolicy(0.5);
const asker = (model: string, policy?: string) =>
  agentFile({ description: "Asks a person", model, tools: ["person"], ...(policy ? { policy } : {}) });

beforeAll(async () => {
  p = await createProject({
    scripts: { writer: SCRIPT, long_writer: LONG_SCRIPT, question: QUESTION, choice: CHOICE },
    models: { costly_priced: { provider: "script", model: "costly_question", price: { input: 1, output: 1 } } },
    files: {
      "scripts/costly_question.yaml": COSTLY_QUESTION,
      "policies/capped.yaml": CAPPED,
      "agents/thrifty.md": asker("costly_priced", "capped"),
      "policies/careful.yaml": POLICY,
      "policies/no_questions.yaml": NO_QUESTIONS,
      "agents/curious.md": asker("question"),
      "agents/chooser.md": asker("choice"),
      "agents/patient.md": asker("question"),
      "agents/alone.md": asker("question", "no_questions"),
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

/** Reads the call ID out of the answer command that `wardrik ask` printed. */
function answerCommand(stderr: string, agent: string): string | undefined {
  return new RegExp(`wardrik answer ${agent} (call_[0-9A-Z]{26})`).exec(stderr)?.[1];
}

describe("questions to a person (person/ask)", () => {
  it("ask shows the question; ls shows the agent waiting for an answer; wardrik answer completes the turn and the record says who", async () => {
    const ask = p.spawnCli(["ask", "curious", "the cache"]);
    await ask.waitForOutput((_out, err) => answerCommand(err, "curious") !== undefined, 30_000);
    expect(ask.stderr()).toContain("? Which region for the cache?");
    const call = answerCommand(ask.stderr(), "curious")!;
    const ls = await p.cli(["ls", "attention"]);
    expect(ls.stdout).toMatch(
      new RegExp(
        `curious\\s+parked \\(waiting for an answer\\)\\s+Which region for the cache\\? \\(wardrik answer curious ${call} TEXT\\)`,
      ),
    );
    // The columns stay aligned with the longer status.
    const [head, row] = ls.stdout.split("\n");
    expect(row!.indexOf("Which region")).toBe(head!.indexOf("DESCRIPTION"));
    // A question is answered, not approved.
    const approve = await p.cli(["approve", "curious", call]);
    expect(approve.code).toBe(1);
    expect(approve.stderr).toContain(`asks a person a question; answer it (wardrik answer curious ${call} TEXT)`);
    const ok = await p.cli(["answer", "curious", call, "eu-west-1"]);
    expect(ok.code, ok.stderr).toBe(0);
    const done = await ask.done;
    expect(done.code).toBe(0);
    expect(done.stdout).toContain('answer: {"answer":"eu-west-1"}');
    expect(done.stderr).toContain("✓ answered by token:admin: eu-west-1");
    const events = await p.events("curious");
    expect(events.find((e) => short(e.type) === "question.asked")?.data).toEqual({
      call,
      tool: "person/ask",
      question: "Which region for the cache?",
    });
    expect(events.find((e) => short(e.type) === "question.answered")?.data).toEqual({
      call,
      tool: "person/ask",
      answer: "eu-west-1",
      by: "token:admin",
    });
    const again = await p.cli(["answer", "curious", call, "us-east-1"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`Call ${call} is not waiting for an answer (it is completed).`);
  });

  it("HTTP answer with choices: a wrong choice is a 400 naming the choices; a right one, under an Idempotency-Key, completes the turn once", async () => {
    const id = await p.agentId("chooser");
    await p.apiOk("POST", `/v1/agents/${id}/messages`, { text: "deploy 42" });
    const asked = await p.waitForEvent(id, (e) => short(e.type) === "question.asked");
    expect(asked.data.choices).toEqual(["roll back", "wait"]);
    const path = `/v1/agents/${id}/calls/${String(asked.data.call)}/answer`;
    const wrong = await p.api<{ detail: string }>("POST", path, { answer: "maybe" });
    expect(wrong.status).toBe(400);
    expect(wrong.json.detail).toBe(
      `"maybe" is not one of the choices of call ${String(asked.data.call)}; answer one of: "roll back", "wait".`,
    );
    const empty = await p.api("POST", path, { answer: "" });
    expect(empty.status).toBe(400);
    const headers = { "Idempotency-Key": "answer-chooser-1" };
    const first = await p.api<{ status: string }>("POST", path, { answer: "roll back" }, { headers });
    expect(first.status, first.text).toBe(200);
    expect(first.json.status).toBe("completed");
    const replay = await p.api<{ status: string }>("POST", path, { answer: "roll back" }, { headers });
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    const end = await p.waitForTurnEnd(id, String(asked.run));
    expect(end.data.reply).toBe('answer: {"answer":"roll back"}');
    const answered = (await p.events(id)).filter((e) => short(e.type) === "question.answered");
    expect(answered).toHaveLength(1);
  });

  it("a policy may deny person/ask: the model is told and nobody is asked", async () => {
    const { end } = await p.send("alone", "x");
    expect(end.data.reply).toContain("Denied by policy: Decide alone.");
    expect((await p.events("alone")).some((e) => short(e.type) === "question.asked")).toBe(false);
  });

  it("a question survives a daemon crash: kill -9 while it waits, restart, answer, the turn completes once; the turn's budget holds across it", async () => {
    const id = await p.agentId("patient");
    const thrifty = await p.agentId("thrifty");
    await p.apiOk("POST", `/v1/agents/${id}/messages`, { text: "the queue" });
    await p.apiOk("POST", `/v1/agents/${thrifty}/messages`, { text: "x" });
    const asked = await p.waitForEvent(id, (e) => short(e.type) === "question.asked");
    await p.waitForEvent(id, (e) => short(e.type) === "turn.parked");
    const costly = await p.waitForEvent(thrifty, (e) => short(e.type) === "question.asked");
    await p.waitForEvent(thrifty, (e) => short(e.type) === "turn.parked");
    await p.kill();
    await p.start();
    const ls = await p.cli(["ls", "--json"]);
    const patient = (JSON.parse(ls.stdout) as { name: string; status: string; question?: unknown }[]).find((a) => a.name === "patient");
    expect(patient).toMatchObject({ status: "parked", question: { call: asked.data.call, question: "Which region for the queue?" } });
    expect((await p.cli(["answer", "patient", String(asked.data.call), "ap-south-1"])).code).toBe(0);
    const end = await p.waitForTurnEnd(id, String(asked.run));
    expect(short(end.type)).toBe("turn.completed");
    expect(end.data.reply).toBe('answer: {"answer":"ap-south-1"}');
    const events = await p.events(id);
    expect(events.filter((e) => short(e.type) === "call.completed" && e.data.call === asked.data.call)).toHaveLength(1);
    expect(events.filter((e) => short(e.type) === "turn.completed" && e.run === asked.run)).toHaveLength(1);

    // The $0.30 spent before the park still counts after the restart and the answer: the next reply passes the cap.
    expect((await p.cli(["answer", "thrifty", String(costly.data.call), "yes"])).code).toBe(0);
    const capped = await p.waitForTurnEnd(thrifty, String(costly.run));
    expect(short(capped.type)).toBe("turn.failed");
    expect(capped.data).toMatchObject({ code: "budget" });
    expect(capped.data.spend_usd).toBeCloseTo(0.6, 6);
    const spent = (await p.events(thrifty)).filter((e) => e.run === costly.run);
    expect(spent.filter((e) => short(e.type) === "model.replied")).toHaveLength(2);
    expect(spent.filter((e) => short(e.type) === "question.asked")).toHaveLength(1);
    expect(spent.filter((e) => short(e.type) === "question.answered")).toHaveLength(1);
    expect(spent.filter((e) => short(e.type) === "budget.exceeded")).toHaveLength(1);
  });
});
