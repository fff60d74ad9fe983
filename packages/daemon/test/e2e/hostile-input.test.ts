/**
 * Two megabytes of nesting at every entry point of a real daemon: a route
 * behind a token (a message, an approval with edited arguments), the worker
 * WebSocket, the agents' MCP endpoint, Slack's two routes, an inbound webhook
 * and the OAuth callback. Each answers a clear 4xx (the worker gets a close
 * with its reason), the daemon stays up, and another org's request is
 * answered while the hostile one is in flight. Unsigned requests to the
 * public routes are refused on their signature, before the body is parsed,
 * and a worker frame past the size limit is refused before it is parsed.
 * (How soon the other org is answered is measured by `npm run bench --
 * isolation`, not here: tests assert no timings.)
 */
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { WORKER_PROTOCOL_VERSION } from "@wardrik/protocol";
import { agentFile, short } from "../helpers/spawn-daemon.js";
import { createSlackProject, SIGNING_SECRET, type SlackProject } from "../helpers/slack-project.js";
import { sendAsSlack } from "../helpers/slack-loopback.js";

/** 2,000,000 bytes of balanced brackets: a million levels, valid JSON. */
const BRACKETS = "[".repeat(1_000_000) + "]".repeat(1_000_000);
/** 300,000 levels of `{"a":...}` (1.8 MB), the worker result of the report. */
const OBJECTS = '{"a":'.repeat(300_000) + "1" + "}".repeat(300_000);
const HOOK_SECRET = `whsec_${randomBytes(24).toString("base64")}`;
const POLICY =
  "description: Writes need a person.\nrules:\n  - tool: files/write\n    decision: ask\n  - tool: files/*\n    decision: allow\n";
const WRITE = "steps:\n  - tool_calls:\n      - tool: files/write\n        args: { path: note.md, content: draft }\n  - text: done\n";

let s: SlackProject;
/** A token of another org, whose requests must be answered while the hostile ones run. */
let bystander: string;
let hostileWorkerToken: string;

beforeAll(async () => {
  s = await createSlackProject({
    scripts: { writer: WRITE },
    files: {
      "policies/careful.yaml": POLICY,
      "agents/triage.md": agentFile({ description: "Slack's agent", model: "script/echo" }),
      "agents/writer.md": agentFile({ description: "Writes with approval", model: "writer", tools: ["files"], policy: "careful" }),
      "agents/hooked.md": agentFile({
        description: "Woken by a webhook",
        model: "script/echo",
        triggers: [{ webhook: "deploy", secret: HOOK_SECRET, message: "deployed {{service}}" }],
      }),
    },
  });
  const made = await s.p.apiOk<{ token: string }>("POST", "/v1/tokens", { org: "acme", name: "bystander" });
  bystander = made.token;
  const agent = await s.p.api("POST", "/v1/agents", { name: "helper", description: "acme's agent", model: "demo" }, { token: bystander });
  expect(agent.status).toBe(201);
  hostileWorkerToken = (await s.p.apiOk<{ token: string }>("POST", "/v1/tokens", { org: "mallory", name: "worker" })).token;
});

/** Runs the hostile request; while it is in flight another org lists its agents; then the daemon must still answer. */
async function otherOrgAnsweredDuring<T>(hostile: () => Promise<T>): Promise<T> {
  const attack = hostile();
  const other = await fetch(`${s.p.url}/v1/agents`, { headers: { authorization: `Bearer ${bystander}` } });
  expect(other.status).toBe(200);
  expect(((await other.json()) as { agents: { name: string }[] }).agents.map((a) => a.name)).toEqual(["helper"]);
  const result = await attack;
  // Through the helper: a daemon in the test process also fails this when an error escaped it (the end of a spawned one).
  expect((await s.p.api("GET", "/v1/health")).status).toBe(200);
  return result;
}

interface ErrorJson {
  code: string;
  detail: string;
}

function expectTooDeep(r: { status: number; json: unknown }, what = "The body"): void {
  expect(r.status).toBe(400);
  const e = r.json as ErrorJson;
  expect(e.code).toBe("json_too_deep");
  expect(e.detail).toContain(`${what} nests objects and arrays deeper than 64 levels`);
}

describe("2 MB of nesting at each entry point", () => {
  it("a route behind a token answers 400 json_too_deep", async () => {
    const id = await s.p.agentId("triage");
    const r = await otherOrgAnsweredDuring(() =>
      s.p.api("POST", `/v1/agents/${id}/messages`, undefined, {
        raw: `{"text":"hi","conversation":${BRACKETS}}`,
        headers: { "content-type": "application/json" },
      }),
    );
    expectTooDeep(r);
  });

  it("approving a call with deeply nested edited arguments answers 400, and the call keeps waiting", async () => {
    const id = await s.p.agentId("writer");
    await s.p.apiOk("POST", `/v1/agents/${id}/messages`, { text: "write it" });
    const asked = await s.p.waitForEvent(id, (e) => short(e.type) === "approval.requested");
    const call = asked.data.call as string;
    const r = await otherOrgAnsweredDuring(() =>
      s.p.api("POST", `/v1/agents/${id}/calls/${call}/approve`, undefined, {
        raw: `{"arguments":{"path":"note.md","content":"x","deep":${OBJECTS}}}`,
        headers: { "content-type": "application/json" },
      }),
    );
    expectTooDeep(r);
    const detail = await s.p.apiOk<{ waiting_calls: { call: string }[] }>("GET", `/v1/agents/${id}`);
    expect(detail.waiting_calls.map((w) => w.call)).toEqual([call]);
  });

  it("a worker's result frame nested 300,000 deep closes that worker's connection with the reason", async () => {
    const ws = new WebSocket(s.p.url.replace(/^http/, "ws") + "/v1/workers", {
      headers: { authorization: `Bearer ${hostileWorkerToken}` },
    });
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    const errors: string[] = [];
    ws.on("message", (data) => {
      const text = String(data);
      if (text.includes('"type":"error"')) errors.push(text);
    });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    ws.send(JSON.stringify({ type: "hello", protocol: WORKER_PROTOCOL_VERSION, name: "hostile", instance: "h-1", sdk: "raw" }));
    const { code, reason } = await otherOrgAnsweredDuring(() => {
      ws.send(`{"type":"result","callId":"call_none","attempt":1,"ok":true,"output":${OBJECTS}}`);
      return closed;
    });
    expect(code).toBe(1008);
    expect(reason).toContain("nests objects and arrays deeper than 64");
    expect(errors.join("")).toContain('"code":"invalid_message"');
  });

  it("a worker frame over 16 MiB closes that worker's connection with 1009, before it is parsed", async () => {
    const ws = new WebSocket(s.p.url.replace(/^http/, "ws") + "/v1/workers", {
      headers: { authorization: `Bearer ${hostileWorkerToken}` },
    });
    const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
    // The close may reach the client while it is still sending: a reset then is the same refusal.
    ws.on("error", () => undefined);
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    ws.send(JSON.stringify({ type: "hello", protocol: WORKER_PROTOCOL_VERSION, name: "hostile", instance: "h-2", sdk: "raw" }));
    const code = await otherOrgAnsweredDuring(() => {
      ws.send(`{"type":"result","callId":"call_none","attempt":1,"ok":true,"output":"${"x".repeat(17 * 1024 * 1024)}"}`);
      return closed;
    });
    expect(code).toBe(1009);
  });

  it("the agents' MCP endpoint answers a JSON-RPC error with status 400", async () => {
    const r = await otherOrgAnsweredDuring(() =>
      s.p.api("POST", "/v1/mcp", undefined, {
        raw: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_agents","arguments":{"x":${BRACKETS}}}}`,
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      }),
    );
    expect(r.status).toBe(400);
    const body = r.json as { jsonrpc: string; id: null; error: { code: number; message: string } };
    expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    expect(body.error.message).toContain("The message nests objects and arrays deeper than 64 levels");
  });

  it("Slack's events route: signed, 400 json_too_deep; unsigned, 401 before anything is parsed", async () => {
    const body = `{"type":"event_callback","event":${BRACKETS}}`;
    expectTooDeep(await otherOrgAnsweredDuring(() => s.event(body)));
    const unsigned = await otherOrgAnsweredDuring(() => s.event("[".repeat(2_000_000), { unsigned: true }));
    expect(unsigned.status).toBe(401);
  });

  it("Slack's interactions route: a nested payload (2 MB as sent), signed, is 400 json_too_deep; unsigned, 401 before anything is parsed", async () => {
    // Each bracket is three bytes once form-encoded: 660,000 of them are about 2 MB, just under the 2 MiB body limit.
    const form = `payload=${encodeURIComponent(`{"type":"block_actions","actions":${"[".repeat(660_000)}`)}`;
    expect(form.length).toBeGreaterThan(1_980_000);
    const url = `${s.p.url}/v1/slack/interactions`;
    const r = await otherOrgAnsweredDuring(() => sendAsSlack(url, SIGNING_SECRET, form, "application/x-www-form-urlencoded"));
    expectTooDeep(r, "The payload");
    const unsigned = await otherOrgAnsweredDuring(() =>
      fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: form }),
    );
    expect(unsigned.status).toBe(401);
  });

  it("an inbound webhook checks the signature on the raw bytes first: unsigned is 401, signed and nested is 400", async () => {
    const hook = (body: string, headers: Record<string, string>) =>
      s.p.api<ErrorJson>("POST", "/v1/hooks/default/deploy", undefined, {
        token: null,
        raw: body,
        headers: { "content-type": "application/json", ...headers },
      });
    // Not even JSON: without a signature it is refused as unsigned, never read as JSON.
    const unsigned = await otherOrgAnsweredDuring(() => hook("[".repeat(2_000_000), {}));
    expect(unsigned.status).toBe(401);
    expect(unsigned.json.code).toBe("unauthorized");

    const body = `{"service":${BRACKETS}}`;
    const at = new Date();
    const signed = await otherOrgAnsweredDuring(() =>
      hook(body, {
        "webhook-id": "msg_deep",
        "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
        "webhook-signature": new Webhook(HOOK_SECRET).sign("msg_deep", at, body),
      }),
    );
    expectTooDeep(signed);
    const events = await s.p.events("hooked");
    expect(events.filter((e) => short(e.type) === "message.queued")).toEqual([]);
  });

  it("the OAuth callback: 2 MB of nesting in the query is 431, a smaller nested state a page that says the login failed", async () => {
    const huge = await otherOrgAnsweredDuring(() => fetch(`${s.p.url}/v1/oauth/callback?state=${"[".repeat(2_000_000)}`));
    expect(huge.status).toBe(431);
    const small = await otherOrgAnsweredDuring(() => fetch(`${s.p.url}/v1/oauth/callback?state=${"%5B".repeat(2_000)}&code=x`));
    expect(small.status).toBe(400);
    expect(await small.text()).toContain("The login did not finish");
  });

  it("a body refused before it is read (a bad token) is read and dropped: the client gets its 401, never a reset, and keeps its connection", async () => {
    // Twenty times: answering while the client still uploaded, then closing, reset it (EPIPE) about once in twenty.
    for (let attempt = 0; attempt < 20; attempt++) {
      const refused = await fetch(`${s.p.url}/v1/agents`, {
        method: "POST",
        headers: { authorization: "Bearer not-a-token", "content-type": "application/json" },
        body: BRACKETS,
      });
      expect(refused.status).toBe(401);
      expect(refused.headers.get("connection")).toBe("keep-alive");
      await refused.text();
      // fetch reuses the kept-alive connection for these; a socket destroyed while draining dropped them.
      for (let i = 0; i < 3; i++) expect((await fetch(`${s.p.url}/v1/health`)).status).toBe(200);
    }
  });
});
