/**
 * Agents as an MCP server over streamable HTTP (`/v1/mcp`), driven by the
 * MCP SDK's own Client against the built daemon: the org's agents as tools,
 * a call that answers with the reply, progress notifications while the turn
 * runs, a call that waits for approval, and org isolation.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, waitFor, type TestProject } from "../helpers/spawn-daemon.js";

const PARKER = `steps:
  - tool_calls: [{ tool: files/write, args: { path: notes.md, content: "from mcp" } }]
  - text: "Wrote notes.md"
`;

let p: TestProject;
let acmeToken: string;
const clients: Client[] = [];

async function connectMcp(token: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "wardrik-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${p.url}/v1/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}`, ...headers } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

const text = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;

beforeAll(async () => {
  p = await createProject({
    scripts: {
      echoer: "steps:\n  - text: 'You said: {{message}}'\n",
      parker: PARKER,
      slow: "delay_ms: 1500\nsteps:\n  - text: 'Slowly: {{message}}'\n",
    },
    files: {
      "policies/careful.yaml": "description: Ask before writing.\nrules:\n  - tool: files/write\n    decision: ask\n",
      "agents/helper.md": agentFile({ description: "Answers questions about the incident queue.", title: "Queue helper", model: "echoer" }),
      "agents/slowpoke.md": agentFile({ description: "Takes its time.", model: "slow" }),
      "agents/parker.md": agentFile({ description: "Writes notes, with approval.", model: "parker", tools: ["files"], policy: "careful" }),
    },
  });
  // A token of org acme (the CLI's `wardrik token` is tested in cli-conventions and idempotency).
  acmeToken = (await p.apiOk<{ token: string }>("POST", "/v1/tokens", { org: "acme" })).token;
  const made = await p.api(
    "POST",
    "/v1/agents",
    { name: "acme-only", description: "Belongs to acme.", model: "echoer" },
    { headers: { "Wardrik-Org": "acme" } },
  );
  expect(made.status, made.text).toBe(201);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await p?.dispose();
});

describe("agents over MCP (streamable HTTP)", () => {
  it("lists one tool per agent of the token's org, named and described after the agent", async () => {
    const client = await connectMcp(p.token);
    expect(client.getServerVersion()?.name).toBe("wardrik");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["helper", "parker", "slowpoke"]);
    const helper = tools.find((t) => t.name === "helper")!;
    expect(helper).toMatchObject({ title: "Queue helper", description: "Answers questions about the incident queue." });
    expect(helper.inputSchema).toMatchObject({
      required: ["message"],
      properties: { message: { type: "string" }, conversation: { type: "string" }, wait_for_approval: { type: "boolean" } },
    });
  });

  it("a call queues the message and answers with the agent's reply, sending progress while the turn runs", async () => {
    const client = await connectMcp(p.token);
    const progress: Progress[] = [];
    const r = await client.callTool({ name: "helper", arguments: { message: "what changed?" } }, undefined, {
      onprogress: (n) => progress.push(n),
    });
    expect(r.isError).toBeFalsy();
    expect(text(r)).toBe("You said: what changed?");
    expect(r.structuredContent).toMatchObject({
      status: "completed",
      conversation: "main",
      reply: "You said: what changed?",
      run: expect.stringMatching(/^run_/),
    });
    const messages = progress.map((n) => n.message);
    expect(messages).toEqual(
      expect.arrayContaining([expect.stringMatching(/^Queued for helper/), expect.stringMatching(/^Calling the model/)]),
    );
    expect(progress.map((n) => n.progress)).toEqual(progress.map((_, i) => i + 1));
    // The same path as POST /v1/agents/{id}/messages: the message is in the agent's history and events.
    const events = await p.events("helper");
    expect(events.some((e) => e.type.endsWith("message.queued") && e.data.text === "what changed?")).toBe(true);

    const other = await client.callTool({ name: "helper", arguments: { message: "elsewhere", conversation: "side" } });
    expect(other.structuredContent).toMatchObject({ status: "completed", conversation: "side" });
    const id = await p.agentId("helper");
    const history = await p.apiOk<{ messages: { role: string }[] }>("GET", `/v1/agents/${id}/conversations/side/messages`);
    expect(history.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("a call that waits for approval says so and how to decide it; with wait_for_approval it waits for the decision", async () => {
    const client = await connectMcp(p.token);
    const id = await p.agentId("parker");
    const waiting = await client.callTool({ name: "parker", arguments: { message: "write it down" } });
    expect(waiting.isError).toBeFalsy();
    const s = waiting.structuredContent as {
      status: string;
      run: string;
      approvals: { call: string; tool: string; approve: string; approve_route: string }[];
    };
    expect(s.status).toBe("waiting_for_approval");
    const call = s.approvals[0]!.call;
    expect(s.approvals[0]).toMatchObject({
      tool: "files/write",
      approve: `wardrik approve parker ${call}`,
      deny: `wardrik deny parker ${call} --reason "..."`,
      approve_route: `POST /v1/agents/${id}/calls/${call}/approve`,
    });
    expect(text(waiting)).toContain(`approve: wardrik approve parker ${call}`);
    expect(text(waiting)).toContain(`GET /v1/agents/${id}/turns/${s.run}`);
    await p.apiOk("POST", `/v1/agents/${id}/calls/${call}/approve`, {});
    await p.waitForTurnEnd("parker", s.run);

    // This time the client waits: the approval shows as progress, a person approves, the reply comes back.
    const progress: string[] = [];
    const pending = client.callTool({ name: "parker", arguments: { message: "again", wait_for_approval: true } }, undefined, {
      onprogress: (n) => progress.push(n.message ?? ""),
      resetTimeoutOnProgress: true,
    });
    const asked = await waitFor(() => progress.find((m) => m.includes("waits for approval")), "the approval as progress", 30_000);
    const next = /\((call_[^)]+)\)/.exec(asked)![1]!;
    expect(asked).toContain(`wardrik approve parker ${next}`);
    const ok = await p.api("POST", `/v1/agents/${id}/calls/${next}/approve`, {});
    expect(ok.status, ok.text).toBe(200);
    const done = await pending;
    expect(done.structuredContent).toMatchObject({ status: "completed", reply: "Wrote notes.md" });
    expect(progress).toContain(`${next} was approved.`);
  });

  it("a client that gives up stops waiting; the agent's turn goes on and is recorded", async () => {
    const client = await connectMcp(p.token);
    const ac = new AbortController();
    const progress: string[] = [];
    const call = client.callTool({ name: "slowpoke", arguments: { message: "take your time" } }, undefined, {
      signal: ac.signal,
      onprogress: (n) => progress.push(n.message ?? ""),
    });
    const started = await waitFor(() => progress.find((m) => / started turn /.test(m)), "the turn to start", 30_000);
    const run = / started turn (run_\S+?)\.$/.exec(started)![1]!;
    ac.abort();
    await expect(call).rejects.toThrow();
    const end = await p.waitForTurnEnd("slowpoke", run);
    expect(end.type).toMatch(/turn\.completed$/);
    expect(end.data.reply).toBe("Slowly: take your time");
    // The same client goes on working.
    expect((await client.callTool({ name: "helper", arguments: { message: "still here" } })).isError).toBeFalsy();
  });

  it("an org token sees only its org's agents; the admin token reaches another org with Wardrik-Org", async () => {
    const acme = await connectMcp(acmeToken);
    expect((await acme.listTools()).tools.map((t) => t.name)).toEqual(["acme-only"]);
    await expect(acme.callTool({ name: "helper", arguments: { message: "hi" } })).rejects.toThrow(/No agent helper in org acme/);
    const r = await acme.callTool({ name: "acme-only", arguments: { message: "hi acme" } });
    expect(text(r)).toBe("You said: hi acme");

    const admin = await connectMcp(p.token, { "Wardrik-Org": "acme" });
    expect((await admin.listTools()).tools.map((t) => t.name)).toEqual(["acme-only"]);
    await expect(connectMcp(acmeToken, { "Wardrik-Org": "default" })).rejects.toThrow(/403|can only reach that org/);
  });

  it("bad arguments get an error that says what is wrong; no token is a 401; GET and DELETE answer 405", async () => {
    const client = await connectMcp(p.token);
    const bad = await client.callTool({ name: "helper", arguments: { message: "", colour: "red" } });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/Invalid arguments for helper: .*message/);
    expect(text(bad)).toMatch(/colour/);

    const anonymous = await fetch(`${p.url}/v1/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Bearer/);
    for (const method of ["GET", "DELETE"]) {
      const r = await p.api(method, "/v1/mcp", undefined, { headers: { accept: "text/event-stream" } });
      expect(r.status).toBe(405);
      expect(r.headers.get("allow")).toBe("POST");
    }
  });
});
