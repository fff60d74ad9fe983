/**
 * A real model provider end to end: config.yaml points a `provider:
 * openai-compatible` model at a loopback server that streams OpenAI Chat
 * Completions chunks (text and tool-call arguments split over chunks, a usage
 * chunk, [DONE]). The agent writes a file with files/write, then answers.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, short, type TestProject } from "../helpers/spawn-daemon.js";
import {
  chunk,
  contentText,
  splitAwkwardly,
  sse,
  startOpenAiLoopback,
  usageChunk,
  type OpenAiLoopback,
} from "../helpers/openai-loopback.js";

let server: OpenAiLoopback;
let p: TestProject;

const FIRST = { prompt: 120, completion: 30 };
const SECOND = { prompt: 200, completion: 10 };
const PRICE = { input: 1, output: 2 };
const cost = (u: { prompt: number; completion: number }) => (u.prompt * PRICE.input + u.completion * PRICE.output) / 1_000_000;

beforeAll(async () => {
  server = await startOpenAiLoopback((req) => {
    const messages = req.body?.messages ?? [];
    const answered = messages.some((m) => m.role === "tool");
    if (!answered) {
      // First call: a little text, then one files/write call whose arguments arrive in three pieces.
      return {
        pieces: splitAwkwardly(
          sse([
            chunk({ role: "assistant", content: "" }),
            chunk({ content: "Saving " }),
            chunk({ content: "it now." }),
            chunk({ tool_calls: [{ index: 0, id: "call_loop_1", type: "function", function: { name: "files__write", arguments: "" } }] }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: '{"path": "notes/' } }] }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: 'greeting.md", "content": "hello ' } }] }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: 'from the loopback"}' } }] }),
            chunk({}, "tool_calls"),
            usageChunk(FIRST.prompt, FIRST.completion),
          ]),
        ),
      };
    }
    return {
      pieces: sse([
        chunk({ role: "assistant", content: "" }),
        chunk({ content: "Saved to " }),
        chunk({ content: "notes/greeting.md." }),
        chunk({}, "stop"),
        usageChunk(SECOND.prompt, SECOND.completion),
      ]),
    };
  });
  p = await createProject({
    models: { loop: { provider: "openai-compatible", model: "loopback-model", base_url: server.baseUrl, api_key: "x", price: PRICE } },
    files: {
      "agents/remote.md": agentFile({ description: "Talks to the loopback model", model: "loop", tools: ["files"] }, "You save greetings."),
    },
  });
});

describe("an openai-compatible model over a streaming loopback server", () => {
  it("the agent calls files/write, gets the result back to the model, and answers", async () => {
    const r = await p.cli(["ask", "remote", "Please save a greeting", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const turn = JSON.parse(r.stdout) as {
      id: string;
      status: string;
      reply: string;
      iterations: number;
      calls: { tool: string; status: string }[];
    };
    expect(turn.status).toBe("completed");
    expect(turn.reply).toBe("Saved to notes/greeting.md.");
    expect(turn.iterations).toBe(2);
    expect(turn.calls).toEqual([expect.objectContaining({ tool: "files/write", status: "completed" })]);

    // What the server received.
    expect(server.requests).toHaveLength(2);
    const [first, second] = server.requests;
    expect(first!.method).toBe("POST");
    expect(first!.url).toBe("/v1/chat/completions");
    expect(first!.headers.authorization).toBe("Bearer x");
    expect(first!.body!.model).toBe("loopback-model");
    expect(first!.body!.stream).toBe(true);
    expect(first!.body!.tools!.map((t) => t.function.name)).toEqual(expect.arrayContaining(["files__write", "files__read"]));
    expect(first!.body!.messages[0]).toEqual(expect.objectContaining({ role: "system" }));
    expect(contentText(first!.body!.messages[0]!)).toContain("You save greetings.");
    expect(contentText(first!.body!.messages.at(-1)!)).toBe("Please save a greeting");

    // The second request carries the assistant's call and the tool's result for it.
    const msgs = second!.body!.messages;
    const assistant = msgs.find((m) => m.role === "assistant" && m.tool_calls?.length);
    expect(assistant!.tool_calls![0]!.id).toBe("call_loop_1");
    expect(assistant!.tool_calls![0]!.function.name).toBe("files__write");
    expect(JSON.parse(assistant!.tool_calls![0]!.function.arguments)).toEqual({
      path: "notes/greeting.md",
      content: "hello from the loopback",
    });
    const tool = msgs.find((m) => m.role === "tool");
    expect(tool!.tool_call_id).toBe("call_loop_1");
    expect(JSON.parse(contentText(tool!))).toEqual({ path: "notes/greeting.md", bytes: "hello from the loopback".length });
  });

  it("model.replied events carry the tokens and the cost from the config's prices; the turn sums them", async () => {
    const events = await p.events("remote");
    const replied = events.filter((e) => short(e.type) === "model.replied");
    expect(replied.map((e) => [e.data.input_tokens, e.data.output_tokens])).toEqual([
      [FIRST.prompt, FIRST.completion],
      [SECOND.prompt, SECOND.completion],
    ]);
    expect(replied[0]!.data.cost_usd).toBeCloseTo(cost(FIRST), 12);
    expect(replied[1]!.data.cost_usd).toBeCloseTo(cost(SECOND), 12);
    expect(replied[0]!.data.tool_calls).toBe(1);
    expect(replied[0]!.data.text).toBe("Saving it now.");
    const done = events.find((e) => short(e.type) === "turn.completed")!;
    expect(done.data.spend_usd).toBeCloseTo(cost(FIRST) + cost(SECOND), 12);
    const completed = events.find((e) => short(e.type) === "call.completed")!;
    expect(completed.data.output).toEqual({ path: "notes/greeting.md", bytes: 23 });

    // The agent's spend shows the same.
    const show = await p.apiOk<{ spend: { model_usd: number } }>("GET", `/v1/agents/${await p.agentId("remote")}`);
    expect(show.spend.model_usd).toBeCloseTo(cost(FIRST) + cost(SECOND), 12);
  });

  it("without --json, the streamed text goes to stdout and the tool call to stderr", async () => {
    const before = server.requests.length;
    const r = await p.cli(["ask", "remote", "Once more", "--conversation", "plain"]);
    expect(r.code, r.stderr).toBe(0);
    expect(server.requests.length).toBe(before + 2);
    expect(r.stdout.trim().split("\n").at(-1)).toBe("Saved to notes/greeting.md.");
    expect(r.stderr).toMatch(/files\/write \(call_[0-9A-Z]{26}\)/);
  });

  it("the file is in the agent's space: a later turn can read it", async () => {
    server.handle((req) => {
      const answered = (req.body?.messages ?? []).some((m) => m.role === "tool" && contentText(m).includes("hello from the loopback"));
      if (!answered) {
        return {
          pieces: sse([
            chunk({
              tool_calls: [
                {
                  index: 0,
                  id: "call_read",
                  type: "function",
                  function: { name: "files__read", arguments: '{"path":"notes/greeting.md"}' },
                },
              ],
            }),
            chunk({}, "tool_calls"),
            usageChunk(10, 5),
          ]),
        };
      }
      return { pieces: sse([chunk({ content: "It says hello." }), chunk({}, "stop"), usageChunk(10, 5)]) };
    });
    const start = server.requests.length;
    const { end } = await p.send("remote", "What does the file say?", "read");
    expect(end.data.reply).toBe("It says hello.");
    const readResult = server.requests
      .slice(start)
      .flatMap((q) => q.body?.messages ?? [])
      .find((m) => m.role === "tool" && m.tool_call_id === "call_read");
    expect(JSON.parse(contentText(readResult!))).toEqual({ path: "notes/greeting.md", content: "hello from the loopback" });
  });
});
