/**
 * `wardrik ask` prints the reply as the model streams it, before the turn ends;
 * the stored history holds the whole message. Reply text is streamed live and
 * never stored, so ask follows the agent before it sends the message: its
 * first words are not lost even when the daemon's answer to the POST is slow
 * to arrive (a proxy holds it back).
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFaultProxy } from "../helpers/fault-proxy.js";
import { agentFile, createProject, short, type TestProject } from "../helpers/spawn-daemon.js";

let p: TestProject;
let release!: () => void;
const gate = new Promise<void>((r) => (release = r));
const server = createServer((req, res: ServerResponse) => {
  let raw = "";
  req.on("data", (c: Buffer) => (raw += c.toString()));
  req.on("end", () => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    const send = (delta: Record<string, unknown>, finish: string | null = null) =>
      res.write(
        `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
      );
    if ((JSON.parse(raw) as { model: string }).model === "early") {
      // The first words at once, the rest a while later.
      send({ role: "assistant", content: "Early words, " });
      setTimeout(() => {
        send({ content: "then the rest." });
        send({}, "stop");
        res.end("data: [DONE]\n\n");
      }, 2500);
      return;
    }
    send({ role: "assistant", content: "First half, " });
    // The rest comes only when the test has seen the first half on ask's stdout.
    void gate.then(() => {
      send({ content: "second half." });
      send({}, "stop");
      res.write(
        `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [], usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 } })}\n\n`,
      );
      res.end("data: [DONE]\n\n");
    });
  });
});

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  p = await createProject({
    models: {
      slow: { provider: "openai-compatible", model: "m", base_url: url, api_key: "x" },
      early: { provider: "openai-compatible", model: "early", base_url: url, api_key: "x" },
    },
    files: {
      "agents/talker.md": agentFile({ description: "Streams", model: "slow" }),
      "agents/early.md": agentFile({ description: "Streams its first words at once", model: "early" }),
    },
  });
});
afterAll(async () => {
  release();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

describe("wardrik ask streaming", () => {
  it("prints the first part of the reply while the model is still answering", async () => {
    const ask = p.spawnCli(["ask", "talker", "tell me"]);
    await ask.waitForOutput((out) => out.includes("First half, "), 30_000);
    const id = await p.agentId("talker");
    const before = await p.events(id);
    expect(before.some((e) => short(e.type) === "turn.completed")).toBe(false);
    release();
    const done = await ask.done;
    expect(done.code).toBe(0);
    expect(done.stdout).toBe("First half, second half.\n");
    const history = await p.apiOk<{ messages: { role: string; content: { text?: string } }[] }>(
      "GET",
      `/v1/agents/${id}/conversations/main/messages`,
    );
    expect(history.messages.map((m) => m.content.text)).toEqual(["tell me", "First half, second half."]);
  });

  it("keeps the first words that stream while the daemon's answer to the message is still on its way", async () => {
    const proxy = await startFaultProxy(() => p.url);
    proxy.delayNextAnswer(1500);
    const r = await p.cli(["ask", "early", "go"], { env: { WARDRIK_URL: proxy.url } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("Early words, then the rest.\n");
  });
});
