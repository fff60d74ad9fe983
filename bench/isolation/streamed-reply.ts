/**
 * A model reply of 200,000 characters streamed fast in 5-character chunks by a
 * loopback server speaking OpenAI's Chat Completions wire format, with a
 * client following the agent's event stream (every delta is an SSE frame).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { count, type HostileTally, type IsolationKind } from "../isolation-kit.js";

const CHARS = 200_000;
const CHUNK = "abcd ";
let server: Server | undefined;

function chunk(delta: Record<string, unknown>, finish: string | null = null): string {
  const body = {
    id: "chatcmpl-bench",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  return `data: ${JSON.stringify(body)}\n\n`;
}

/** Answers every request with the whole reply, written as fast as the socket takes it. */
function startLoopback(): Promise<number> {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      void (async () => {
        let buf = chunk({ role: "assistant", content: "" });
        for (let i = 0; i < CHARS / CHUNK.length; i++) {
          buf += chunk({ content: CHUNK });
          if (buf.length > 16_384) {
            if (!res.write(buf)) await new Promise((r) => res.once("drain", r));
            buf = "";
          }
        }
        res.end(buf + chunk({}, "stop") + "data: [DONE]\n\n");
      })();
    });
  });
  return new Promise((resolve) => server!.listen(0, "127.0.0.1", () => resolve((server!.address() as AddressInfo).port)));
}

export const kind: IsolationKind = {
  name: "streamed-reply",
  hostile: "a 200,000-character reply streamed fast in 5-character chunks (OpenAI wire format), followed over SSE",
  prepare: async (draft) => {
    const port = await startLoopback();
    draft.models.loop = `{ provider: openai-compatible, model: m, base_url: "http://127.0.0.1:${port}/v1", api_key: x }`;
    draft.files["agents/streamer.md"] = "---\ndescription: Streams long replies\nmodel: loop\n---\nYou talk.\n";
  },
  attack: async (d) => {
    const tally: HostileTally = {};
    const id = await d.agentId("streamer");
    const headers = { authorization: `Bearer ${d.token}`, "content-type": "application/json" };
    const follow = new AbortController();
    let frames = 0;
    const stream = await fetch(`${d.url}/v1/agents/${id}/events/stream?after=${Number.MAX_SAFE_INTEGER}`, {
      headers,
      signal: follow.signal,
    });
    const reading = (async () => {
      for await (const piece of stream.body!)
        frames += (
          Buffer.from(piece as Uint8Array)
            .toString()
            .match(/^event: /gm) ?? []
        ).length;
    })().catch(() => undefined);
    const res = await fetch(`${d.url}/v1/agents/${id}/messages`, { method: "POST", headers, body: JSON.stringify({ text: "talk" }) });
    const { message } = (await res.json()) as { message: string };
    count(tally, `turn_${(await d.turnEnd(id, message)).type.split(".").pop()!}`);
    follow.abort();
    await reading;
    tally.sse_frames = frames;
    return tally;
  },
  close: () => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())),
};
