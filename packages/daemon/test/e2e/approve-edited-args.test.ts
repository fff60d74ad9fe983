/**
 * Approving a call with arguments a person edited: through the API
 * (`POST .../approve` with `arguments`) and the CLI (`wardrik approve --args`).
 * The tool runs with the edited arguments, the record keeps both, and edited
 * arguments that do not fit the tool's schema are refused with what is wrong.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import {
  REPO_ROOT,
  agentFile,
  cleanupLater,
  createProject,
  short,
  waitFor,
  type TestProject,
  type WireEvent,
} from "../helpers/spawn-daemon.js";
import { workerArgs } from "../helpers/worker-bundle.js";

let p: TestProject;

// Writes the message to note.md, reads the file back, and replies with what it read.
const SCRIPT = `steps:
  - tool_calls:
      - tool: files/write
        args: { path: "note.md", content: "{{message}}" }
  - tool_calls:
      - tool: files/read
        args: { path: "note.md" }
  - text: "note: {{result}}"
`;
const POLICY = `description: Writes need a person.
rules:
  - tool: files/write
    decision: ask
    reason: Writing needs a person's OK.
  - tool: files/*
    decision: allow
  - tool: workers/refund
    decision: ask
    reason: Refunds need a person.
`;
const REFUND = `steps:
  - tool_calls:
      - tool: workers/refund
        args: { orderId: "{{message}}", amount: 500 }
  - text: "refunded: {{result}}"
`;

beforeAll(async () => {
  p = await createProject({
    scripts: { noter: SCRIPT, refunder: REFUND },
    files: {
      "policies/careful.yaml": POLICY,
      "agents/refunds.md": agentFile({ description: "Refunds orders", model: "refunder", tools: ["workers/*"], policy: "careful" }),
      ...Object.fromEntries(
        ["api-editor", "bad-editor", "cli-editor", "by-editor"].map((n) => [
          `agents/${n}.md`,
          agentFile({ description: "Writes notes with approval", model: "noter", tools: ["files"], policy: "careful" }),
        ]),
      ),
    },
  });
});

/** Sends `text` and waits until its files/write call waits for approval. */
async function parkedCall(agent: string, text: string): Promise<{ id: string; call: string; run: string }> {
  const id = await p.agentId(agent);
  await p.apiOk("POST", `/v1/agents/${id}/messages`, { text });
  const asked = await p.waitForEvent(id, (e) => short(e.type) === "approval.requested");
  return { id, call: asked.data.call as string, run: asked.run! };
}

function ofType(events: WireEvent[], type: string): WireEvent[] {
  return events.filter((e) => short(e.type) === type);
}

describe("approve with edited arguments", () => {
  it("the tools listing gives each tool's input schema, which edited arguments are checked against", async () => {
    const id = await p.agentId("api-editor");
    const tools = await p.apiOk<{ tools: { name: string; input_schema: Record<string, unknown> }[] }>("GET", `/v1/agents/${id}/tools`);
    const write = tools.tools.find((t) => t.name === "files/write")!;
    expect(write.input_schema).toMatchObject({ type: "object", required: ["path", "content"], additionalProperties: false });
  });

  it("the API runs the call with the edited arguments and the record keeps both", async () => {
    const { id, call, run } = await parkedCall("api-editor", "model draft");
    const r = await p.api("POST", `/v1/agents/${id}/calls/${call}/approve`, {
      arguments: { path: "note.md", content: "edited by a person" },
    });
    expect(r.status).toBe(200);
    const end = await p.waitForTurnEnd(id, run);
    expect(short(end.type)).toBe("turn.completed");
    // The tool wrote what the person gave it; the next read sees it.
    expect(end.data.reply).toBe("note: edited by a person");
    const events = await p.events(id);
    const granted = ofType(events, "approval.granted").find((e) => e.data.call === call)!;
    expect(granted.data).toMatchObject({
      tool: "files/write",
      args: { path: "note.md", content: "edited by a person" },
      original_args: { path: "note.md", content: "model draft" },
      by: "token:admin",
    });
    const requested = ofType(events, "approval.requested").find((e) => e.data.call === call)!;
    expect(requested.data.args).toEqual({ path: "note.md", content: "model draft" });
    const completed = ofType(events, "call.completed").find((e) => e.data.call === call)!;
    expect(completed.data.output).toEqual({ path: "note.md", bytes: "edited by a person".length });
  });

  it("afterwards the history, the turn, agent show and the event log show the edited arguments, marked edited", async () => {
    const id = await p.agentId("api-editor");
    const history = await p.cli(["history", "api-editor"]);
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout).toContain(
      '[calls files/write {"path":"note.md","content":"edited by a person"} (edited at approval; the model asked for {"path":"note.md","content":"model draft"})]',
    );
    const page = await p.apiOk<{ messages: { role: string; content: { toolCalls?: Record<string, unknown>[] } }[] }>(
      "GET",
      `/v1/agents/${id}/conversations/main/messages`,
    );
    const write = page.messages.flatMap((m) => m.content.toolCalls ?? []).find((c) => c.tool === "files/write")!;
    expect(write).toMatchObject({
      args: { path: "note.md", content: "edited by a person" },
      original_args: { path: "note.md", content: "model draft" },
      edited: true,
    });
    // An unedited call of the same turn is as the model wrote it.
    const read = page.messages.flatMap((m) => m.content.toolCalls ?? []).find((c) => c.tool === "files/read")!;
    expect(read).not.toHaveProperty("edited");

    const granted = ofType(await p.events(id), "approval.granted")[0]!;
    const turn = await p.apiOk<{ calls: Record<string, unknown>[] }>("GET", `/v1/agents/${id}/turns/${granted.run}`);
    expect(turn.calls.find((c) => c.tool === "files/write")).toMatchObject({
      args: { content: "edited by a person" },
      original_args: { content: "model draft" },
      edited: true,
    });
    const show = await p.cli(["agent", "show", "api-editor"]);
    expect(show.stdout).toContain(`  edited at approval: ${granted.data.call as string} files/write (completed)`);
    expect(show.stdout).toMatch(/^ {4}ran with: \{[\s\S]*"content": "edited by a person"/m);
    expect(show.stdout).toMatch(/^ {4}model asked for: \{[\s\S]*"content": "model draft"/m);
    const detail = await p.apiOk<{ edited_calls: Record<string, unknown>[] }>("GET", `/v1/agents/${id}`);
    expect(detail.edited_calls).toEqual([
      {
        call: granted.data.call,
        tool: "files/write",
        run: granted.run,
        status: "completed",
        args: { path: "note.md", content: "edited by a person" },
        original_args: { path: "note.md", content: "model draft" },
      },
    ]);
    const events = await p.cli(["events", "api-editor"]);
    expect(events.stdout).toMatch(
      /approval\.granted .* files\/write approved by token:admin edited: \{"path":"note\.md","content":"edited by a person"\} \(was \{"path":"note\.md","content":"model draft"\}\)/,
    );
  });

  it("approval.granted and approval.denied name who decided: the name of the token used", async () => {
    const minted = await p.cli(["token", "default", "--name", "alice", "--json"]);
    expect(minted.code, minted.stderr).toBe(0);
    const alice = (JSON.parse(minted.stdout) as { token: string }).token;
    const first = await parkedCall("by-editor", "one");
    const denied = await p.api("POST", `/v1/agents/${first.id}/calls/${first.call}/deny`, { reason: "not today" }, { token: alice });
    expect(denied.status).toBe(200);
    await p.waitForTurnEnd(first.id, first.run);
    const refusal = ofType(await p.events(first.id), "approval.denied").find((e) => e.data.call === first.call)!;
    expect(refusal.data).toMatchObject({ reason: "not today", by: "token:alice", code: "denied" });

    await p.apiOk("POST", `/v1/agents/${first.id}/messages`, { text: "two" });
    const asked = await p.waitForEvent(first.id, (e) => short(e.type) === "approval.requested" && e.run !== first.run);
    const second = { id: first.id, call: asked.data.call as string, run: asked.run! };
    const approved = await p.cli(["approve", "by-editor", second.call]);
    expect(approved.code, approved.stderr).toBe(0);
    await p.waitForTurnEnd(second.id, second.run);
    const grant = ofType(await p.events(second.id), "approval.granted").find((e) => e.data.call === second.call)!;
    expect(grant.data).toEqual({ call: second.call, tool: "files/write", by: "token:admin" });
  });

  it("edited arguments that do not fit the schema are refused with what is wrong, and the call keeps waiting", async () => {
    const { id, call, run } = await parkedCall("bad-editor", "first");
    const missing = await p.api<{ code: string; detail: string }>("POST", `/v1/agents/${id}/calls/${call}/approve`, {
      arguments: { path: "note.md" },
    });
    expect(missing.status).toBe(400);
    expect(missing.json.detail).toContain(`files/write's input schema: arguments needs property "content"`);
    const wrong = await p.api<{ detail: string }>("POST", `/v1/agents/${id}/calls/${call}/approve`, {
      arguments: { path: 7, content: "x", mode: "append" },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.json.detail).toContain("arguments.path: ");
    expect(wrong.json.detail).toContain(`arguments has property "mode", which the tool does not take`);
    const notObject = await p.api("POST", `/v1/agents/${id}/calls/${call}/approve`, { arguments: ["no"] });
    expect(notObject.status).toBe(400);

    // Nothing was decided: the call still waits, and approving it as it is runs the model's arguments.
    const detail = await p.apiOk<{ waiting_calls: { call: string }[] }>("GET", `/v1/agents/${id}`);
    expect(detail.waiting_calls.map((w) => w.call)).toEqual([call]);
    expect(ofType(await p.events(id), "approval.granted")).toEqual([]);
    expect((await p.api("POST", `/v1/agents/${id}/calls/${call}/approve`)).status).toBe(200);
    const end = await p.waitForTurnEnd(id, run);
    expect(end.data.reply).toBe("note: first");
    const granted = ofType(await p.events(id), "approval.granted")[0]!;
    expect(granted.data).not.toHaveProperty("original_args");
  });

  it("wardrik approve --args runs the call with the edited arguments; --args that is not a JSON object is a usage error", async () => {
    const { id, call, run } = await parkedCall("cli-editor", "from the model");
    const notJson = await p.cli(["approve", "cli-editor", call, "--args", "{content: x}"]);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/--args is not valid JSON/);
    const notObject = await p.cli(["approve", "cli-editor", call, "--args", '"text"']);
    expect(notObject.code).toBe(2);
    expect(notObject.stderr).toMatch(/--args must be a JSON object/);
    const bad = await p.cli(["approve", "cli-editor", call, "--args", '{"path": "note.md"}']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`arguments needs property "content"`);

    const ok = await p.cli(["approve", "cli-editor", call, "--args", '{"path": "note.md", "content": "from the CLI"}']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`Approved ${call} (files/write) with edited arguments.`);
    const end = await p.waitForTurnEnd(id, run);
    expect(end.data.reply).toBe("note: from the CLI");
    const granted = ofType(await p.events(id), "approval.granted")[0]!;
    expect(granted.data).toMatchObject({ args: { content: "from the CLI" }, original_args: { content: "from the model" } });
  });

  it("a worker's tool receives the edited arguments, not the model's", async () => {
    const file = fileURLToPath(new URL("./fixtures/refund-worker.ts", import.meta.url));
    const env: NodeJS.ProcessEnv = { ...process.env, WARDRIK_URL: p.url, WARDRIK_TOKEN: p.token };
    delete env.NODE_OPTIONS;
    const worker = spawn(process.execPath, workerArgs(file), {
      cwd: REPO_ROOT,
      env,
      stdio: "ignore",
    });
    cleanupLater(async () => {
      if (worker.exitCode !== null || worker.signalCode !== null) return;
      const exited = new Promise((r) => worker.once("exit", r));
      worker.kill("SIGKILL");
      await exited;
    });
    const agent = await p.agentId("refunds");
    await waitFor(async () => {
      const tools = await p.apiOk<{ tools: { name: string }[] }>("GET", `/v1/agents/${agent}/tools`);
      return tools.tools.some((t) => t.name === "workers/refund");
    }, "the worker's refund tool");
    const { id, call, run } = await parkedCall("refunds", "ord_1");
    const r = await p.api("POST", `/v1/agents/${id}/calls/${call}/approve`, { arguments: { orderId: "ord_1", amount: 50 } });
    expect(r.status).toBe(200);
    const end = await p.waitForTurnEnd(id, run);
    expect(end.data.reply).toBe('refunded: {"received":{"orderId":"ord_1","amount":50}}');
  });
});
