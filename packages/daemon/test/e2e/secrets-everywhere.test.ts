/**
 * A secret never leaves the daemon, by any path, at any depth, in any number
 * of pieces. A stored secret and two `${env:}` values reach:
 * - a real stdio MCP server as arguments (one after a flag that does not look
 *   like a credential, `--region VALUE`, the others positional), which writes
 *   them to stderr a few characters at a time and returns them 1,000 levels
 *   down in a structured result;
 * - a real SDK worker, which returns the secret 1,000 levels down;
 * - the model (a loopback server speaking OpenAI's wire format), which streams
 *   a reply quoting them three characters at a time.
 * Turns run through `wardrik ask`, an MCP client of /v1/mcp and a Slack thread
 * (the loopback Slack), while an SSE client follows the agent. Then the
 * events, message rows, the database, the daemon's log, every SSE frame
 * (`delta` frames included), the CLI's output, the MCP replies, everything
 * sent to Slack and to the model are searched: none holds a value, nor a
 * large piece of one. The blanks show where they were.
 */
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import { databaseContents, projectDatabaseUrl } from "../helpers/database-contents.js";
import { chunk, contentText, sse, startOpenAiLoopback, usageChunk, type ReceivedRequest } from "../helpers/openai-loopback.js";
import { createSlackProject } from "../helpers/slack-project.js";
import { addLeakyServer, startLeakyWorker } from "../helpers/leaky-project.js";
import { agentFile, readSse, short, waitFor } from "../helpers/spawn-daemon.js";

const SECRET = `sv-${randomBytes(10).toString("hex")}-STORED`;
const REGION = `rv-${randomBytes(10).toString("hex")}-AFTER-FLAG`;
const POSITIONAL = `pv-${randomBytes(10).toString("hex")}-POSITIONAL`;
const VALUES = [SECRET, REGION, POSITIONAL];
const MCP_FIXTURE = fileURLToPath(new URL("./fixtures/quoting-mcp.mjs", import.meta.url));
const REPLY = `For the record: ${SECRET}, ${REGION} and ${POSITIONAL}. Done.`;
const REDACTED_REPLY = "For the record: [secret:LEAK_TOKEN], [redacted] and [redacted]. Done.";

/** Fails when `text` holds a value, or a large piece of one. */
function expectClean(where: string, text: string): void {
  for (const value of VALUES) {
    for (const piece of [value, value.slice(0, 12), value.slice(-12)]) {
      expect(text.includes(piece), `${where} holds "${piece}"`).toBe(false);
    }
  }
}

/** The model: asks for the deep tools first, then streams REPLY in pieces of three characters. */
function modelTurn(req: ReceivedRequest, index: number) {
  const last = req.body?.messages.at(-1);
  if (last?.role !== "tool") {
    const call = (i: number, name: string) => ({
      index: i,
      id: `call_${index}_${i}`,
      type: "function",
      function: { name, arguments: "{}" },
    });
    return {
      pieces: sse([
        chunk({ role: "assistant", content: null, tool_calls: [call(0, "workers__reveal_deep"), call(1, "quoter__deep")] }),
        chunk({}, "tool_calls"),
        usageChunk(40, 10),
      ]),
    };
  }
  const pieces: Record<string, unknown>[] = [chunk({ role: "assistant", content: "" })];
  for (let i = 0; i < REPLY.length; i += 3) pieces.push(chunk({ content: REPLY.slice(i, i + 3) }));
  return { pieces: sse([...pieces, chunk({}, "stop"), usageChunk(60, 30)]) };
}

/** How deep a JSON value goes, walked without recursion. */
function depthOf(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    max = Math.max(max, d);
    if (v && typeof v === "object") for (const x of Object.values(v)) stack.push([x, d + 1]);
  }
  return max;
}

describe("a secret leaves by no path", () => {
  it("from a worker and an MCP server 1,000 levels down, from stderr in pieces, from a streamed reply: nowhere", async () => {
    const model = await startOpenAiLoopback(modelTurn);
    const s = await createSlackProject({
      models: { leaky: { provider: "openai-compatible", model: "loopback-model", base_url: model.baseUrl, api_key: "x" } },
      files: {
        "agents/triage.md": agentFile({ description: "Quotes things", model: "leaky", tools: ["quoter/*", "workers/*"], policy: "open" }),
        "policies/open.yaml": 'description: Everything runs.\nrules:\n  - tool: "*"\n    decision: allow\n',
      },
      // Debug lines too: the MCP server's stderr is logged at debug.
      env: { LEAK_REGION: REGION, LEAK_POSITIONAL: POSITIONAL, WARDRIK_LOG_LEVEL: "debug" },
    });
    const p = s.p;
    const args = [MCP_FIXTURE, "--region", "${env:LEAK_REGION}", "${secret:LEAK_TOKEN}", "${env:LEAK_POSITIONAL}"];
    await addLeakyServer(p, SECRET, "quoter", args);
    const worker = await startLeakyWorker(p, SECRET, "triage");
    const agentId = await p.agentId("triage");

    // An SSE client follows the agent the whole time: every frame, deltas included, as it arrived.
    const frames: { event?: string; data: string }[] = [];
    const following = new AbortController();
    const stream = await fetch(`${p.url}/v1/agents/${agentId}/events/stream`, {
      headers: { authorization: `Bearer ${p.token}` },
      signal: following.signal,
    });
    const followed = readSse(stream, (f) => void frames.push(f)).catch(() => undefined);

    // 1. wardrik ask.
    const ask = await p.cli(["ask", "triage", "Quote everything."]);
    expect(ask.code, ask.stderr).toBe(0);
    // 2. An MCP client of /v1/mcp.
    const client = new Client({ name: "wardrik-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${p.url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${p.token}` } } }),
    );
    const progress: string[] = [];
    const mcpReply = await client.callTool({ name: "triage", arguments: { message: "Quote everything." } }, undefined, {
      onprogress: (n) => progress.push(n.message ?? ""),
      timeout: 60_000,
    });
    await client.close();
    // 3. A Slack thread.
    await s.mention("quote everything", "1700000301.000100");
    await s.slack.waitFor(
      () => [...s.slack.messages.values()].find((m) => m.thread_ts === "1700000301.000100" && m.text.endsWith("Done.")),
      "the whole reply in the Slack thread",
    );

    const events = await p.events(agentId);
    const ends = events.filter((e) => short(e.type) === "turn.completed");
    expect(ends).toHaveLength(3);
    await waitFor(
      () => frames.filter((f) => f.event !== "delta" && /turn\.completed/.test(f.data)).length === 3,
      "the SSE client to see 3 turns",
    );
    following.abort();
    await followed;

    // The values did travel, and were blanked on the way: 1,000 levels down, in the reply, in the log.
    for (const e of ends) expect(e.data.reply).toBe(REDACTED_REPLY);
    const deep = events.filter((e) => short(e.type) === "call.completed");
    expect(deep).toHaveLength(6);
    for (const e of deep) {
      expect(depthOf(e.data.output)).toBeGreaterThanOrEqual(1000);
      expect(JSON.stringify(e.data.output)).toMatch(/\[secret:LEAK_TOKEN\]/);
    }
    expect(JSON.stringify(events)).toContain("started with --region [redacted] [secret:LEAK_TOKEN] [redacted]");
    // The server's stderr, written five characters at a time, is logged (at debug) with the values blanked.
    const stderrLines = p
      .daemonStderr()
      .split("\n")
      .filter((l) => l.includes('"MCP server stderr"'))
      .map((l) => String((JSON.parse(l) as { text: string }).text))
      .join("");
    expect(stderrLines).toContain("[secret:LEAK_TOKEN]");
    expect(stderrLines).toContain("[redacted]");
    // Each turn's deltas, as an SSE client got them, add up to the redacted reply, in more than a few pieces.
    const deltas = new Map<string, string[]>();
    for (const f of frames.filter((x) => x.event === "delta")) {
      const d = JSON.parse(f.data) as { run: string; text: string };
      deltas.set(d.run, [...(deltas.get(d.run) ?? []), d.text]);
    }
    expect([...deltas.keys()].sort()).toEqual(ends.map((e) => e.run!).sort());
    for (const texts of deltas.values()) {
      expect(texts.length).toBeGreaterThan(5);
      expect(texts.join("")).toBe(REDACTED_REPLY);
    }
    expect(ask.stdout).toContain(REDACTED_REPLY);
    expect(JSON.stringify(mcpReply)).toContain(REDACTED_REPLY);

    const history: string[] = [];
    const conversations = (await p.apiOk<{ conversations: { key: string }[] }>("GET", `/v1/agents/${agentId}/conversations`)).conversations;
    // The ask and the MCP call share the default conversation; Slack has its thread.
    expect(conversations).toHaveLength(2);
    for (const conv of conversations) {
      const r = await p.api("GET", `/v1/agents/${agentId}/conversations/${encodeURIComponent(conv.key)}/messages`);
      expect(r.status).toBe(200);
      history.push(r.text);
    }
    expect(history.join("\n")).toContain("[secret:LEAK_TOKEN]");
    const cli: string[] = [];
    for (const cmd of [
      ["events", "triage", "--json"],
      ["events", "triage"],
      ["history", "triage"],
      ["agent", "show", "triage"],
      ["tools", "triage"],
    ]) {
      const r = await p.cli(cmd);
      expect(r.code, `${cmd.join(" ")}: ${r.stderr}`).toBe(0);
      cli.push(`wardrik ${cmd.join(" ")}\n${r.stdout}${r.stderr}`);
    }

    const places: [string, string][] = [
      ["events", JSON.stringify(events)],
      ["message rows", history.join("\n")],
      ["SSE frames", JSON.stringify(frames)],
      ["wardrik ask", ask.stdout + ask.stderr],
      ["the MCP reply and its progress", JSON.stringify(mcpReply) + JSON.stringify(progress)],
      ["what Slack was sent", JSON.stringify(s.slack.calls)],
      ["what the model was sent", model.requests.map((r) => r.raw + (r.body?.messages.map(contentText).join("") ?? "")).join("\n")],
      ...cli.map((c, i): [string, string] => [`CLI output ${i}`, c]),
    ];
    const database = projectDatabaseUrl(p.dir, p.read("config.yaml"));
    worker.kill("SIGTERM");
    await p.stop();
    places.push(["the daemon's log", p.daemonStderr() + p.daemonStdout()]);
    for (const [where, text] of places) {
      expect(text.length, `${where} is empty`).toBeGreaterThan(0);
      expectClean(where, text);
    }
    // The database: the SQLite file and its WAL byte by byte, or every row of every PostgreSQL table.
    for (const part of await databaseContents(database)) expectClean(part.where, part.text);
  }, 180_000);
});
