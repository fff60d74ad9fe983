/**
 * `provider: anthropic` driven end to end through resolveModel and callModel
 * against a real loopback server that speaks the documented Messages API
 * streaming format (POST /v1/messages; message_start, content_block_start,
 * content_block_delta, content_block_stop, message_delta, message_stop, ping,
 * error), its bytes cut at awkward boundaries.
 *
 * @ai-sdk/anthropic posts to `${baseURL}/messages` (the default baseURL is
 * https://api.anthropic.com/v1), so base_url is http://127.0.0.1:PORT/v1.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LanguageModelV3FunctionTool, LanguageModelV3Prompt } from "@ai-sdk/provider";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ModelEntry } from "../../src/config/types.js";
import { PromptCache } from "../../src/models/build-prompt.js";
import { resolveModel } from "../../src/models/index.js";
import { callModel, ModelCallError } from "../../src/runtime/call-model.js";
import type { StoredMessage } from "../../src/store/message-format.js";
import { jsonReply, sseText, startLoopback, writeSse, type Loopback, type SseEvent } from "./sse-loopback.js";

const KEY = "sk-ant-api03-loopback-5ecret";
const MODEL = "claude-sonnet-4-5-20250929";

let server: Loopback;
beforeAll(async () => {
  server = await startLoopback();
});
afterAll(() => server.close());
beforeEach(() => server.reset());

function config(entry: Partial<ModelEntry> = {}) {
  return {
    models: { claude: { provider: "anthropic" as const, model: MODEL, base_url: server.baseUrl, api_key: KEY, ...entry } },
    dir: mkdtempSync(join(tmpdir(), "wardrik-anthropic-")),
  };
}

const WRITE_TOOL: LanguageModelV3FunctionTool = {
  type: "function",
  name: "files__write",
  description: "Write a file in the agent's workspace",
  inputSchema: {
    type: "object",
    properties: { path: { type: "string" }, content: { type: "string" } },
    required: ["path", "content"],
    additionalProperties: false,
  },
};

const PROMPT: LanguageModelV3Prompt = [
  { role: "system", content: "You keep notes." },
  { role: "user", content: [{ type: "text", text: "Save a note" }] },
];

/** The input JSON as Anthropic streams it: an empty first piece, then cuts mid-key and mid-escape. */
const JSON_PIECES = ["", '{"pa', 'th": "notes/a.md", "content": "héllo \\', '"q\\"\\nline 2"}'];

const ev = (data: Record<string, unknown>): SseEvent => ({ event: data.type as string, data });

function messageStart(usage: Record<string, number>): SseEvent {
  return ev({
    type: "message_start",
    message: {
      id: "msg_01Loop",
      type: "message",
      role: "assistant",
      model: MODEL,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { output_tokens: 1, ...usage },
    },
  });
}

/** Text, then a tool_use block whose input arrives as partial JSON over several events. */
function toolUseStream(): SseEvent[] {
  return [
    messageStart({ input_tokens: 200, cache_creation_input_tokens: 0, cache_read_input_tokens: 3000 }),
    ev({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
    ev({ type: "ping" }),
    ev({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hello, " } }),
    ev({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "wörld 🌍" } }),
    ev({ type: "content_block_stop", index: 0 }),
    ev({ type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_01Abc", name: "files__write", input: {} } }),
    ...JSON_PIECES.map((partial_json) => ev({ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json } })),
    ev({ type: "content_block_stop", index: 1 }),
    ev({ type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 120 } }),
    ev({ type: "message_stop" }),
  ];
}

function textStream(text: string): SseEvent[] {
  return [
    messageStart({ input_tokens: 1500, cache_read_input_tokens: 0 }),
    ev({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
    ev({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }),
    ev({ type: "content_block_stop", index: 0 }),
    ev({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 7 } }),
    ev({ type: "message_stop" }),
  ];
}

const call = (
  prompt: LanguageModelV3Prompt,
  extra: { retries?: number; onDelta?: (d: string) => void; onRetry?: (attempt: number, delayMs: number, error: string) => void } = {},
) => {
  const resolved = resolveModel("claude", config(), { env: {} });
  return callModel({
    model: resolved.model,
    prompt,
    tools: [WRITE_TOOL],
    signal: new AbortController().signal,
    retries: extra.retries ?? 0,
    price: resolved.price,
    backoffMs: 1,
    ...(extra.onDelta ? { onDelta: extra.onDelta } : {}),
    ...(extra.onRetry ? { onRetry: extra.onRetry } : {}),
  });
};

const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as ModelCallError,
  );

describe("anthropic over a loopback Messages API server", () => {
  it("streams text, a tool call's input from partial JSON, usage with cache reads, and its cost", async () => {
    server.respond = (_req, res) => writeSse(res, sseText(toolUseStream()));
    const resolved = resolveModel("claude", config(), { env: {} });
    expect(resolved).toMatchObject({
      provider: "anthropic",
      modelId: MODEL,
      contextWindow: 200_000,
      price: { input: 3, output: 15, cached_input: 0.3 },
    });

    const deltas: string[] = [];
    const reply = await call(PROMPT, { onDelta: (d) => deltas.push(d) });

    expect(deltas).toEqual(["Hello, ", "wörld 🌍"]);
    expect(reply.text).toBe("Hello, wörld 🌍");
    expect(reply.toolCalls).toHaveLength(1);
    expect(reply.toolCalls[0]).toMatchObject({ toolCallId: "toolu_01Abc", toolName: "files__write" });
    expect(JSON.parse(reply.toolCalls[0]!.input)).toEqual({ path: "notes/a.md", content: 'héllo "q"\nline 2' });
    expect(reply.finishReason).toBe("tool-calls");
    // Anthropic's input_tokens counts only uncached input: the total adds the cache reads.
    expect(reply.usage).toEqual({ input: 3200, output: 120, cached: 3000 });
    // claude-sonnet-4-5: $3 input, $0.30 cached input, $15 output per million tokens.
    // 200 * 3 + 3000 * 0.3 + 120 * 15 = 600 + 900 + 1800 = 3300 micro-dollars.
    expect(reply.costUsd).toBe(0.0033);

    expect(server.received).toHaveLength(1);
    const req = server.received[0]!;
    expect(req.method).toBe("POST");
    expect(req.url).toBe("/v1/messages");
    expect(req.headers["x-api-key"]).toBe(KEY);
    expect(req.headers.authorization).toBeUndefined();
    expect(req.headers["anthropic-version"]).toBe("2023-06-01");
    expect(req.body).toMatchObject({
      model: MODEL,
      stream: true,
      system: [{ type: "text", text: "You keep notes." }],
      messages: [{ role: "user", content: [{ type: "text", text: "Save a note" }] }],
      tools: [{ name: "files__write", description: WRITE_TOOL.description, input_schema: WRITE_TOOL.inputSchema }],
    });
    expect(typeof req.body.max_tokens).toBe("number");
    // The system prompt goes only in `system`, never as a message.
    expect((req.body.messages as { role: string }[]).map((m) => m.role)).toEqual(["user"]);
  });

  it("puts instructions and a compaction summary in system, and sends tool results as tool_result blocks", async () => {
    server.respond = (_req, res) => writeSse(res, sseText(textStream("Saved.")));
    const history: StoredMessage[] = [
      { role: "user", text: "Save a note", input: "Save a note" },
      {
        role: "assistant",
        text: "Saving.",
        toolCalls: [
          { modelCallId: "toolu_01Abc", callId: "call_01", tool: "files/write", args: { path: "notes/a.md", content: "héllo" } },
          { modelCallId: "toolu_02Def", callId: "call_02", tool: "files/write", args: { path: "/etc/passwd", content: "x" } },
        ],
      },
      {
        role: "tool",
        results: [
          { modelCallId: "toolu_01Abc", callId: "call_01", tool: "files/write", isError: false, output: { path: "notes/a.md", bytes: 6 } },
          {
            modelCallId: "toolu_02Def",
            callId: "call_02",
            tool: "files/write",
            isError: true,
            output: "Denied by policy: paths must be relative",
          },
        ],
      },
    ];
    const prompt = new PromptCache(
      history.map((message, i) => ({ seq: i + 1, message })),
      "The user likes short notes.",
    ).build("You keep notes.");

    const reply = await call(prompt);
    expect(reply).toMatchObject({ text: "Saved.", toolCalls: [], finishReason: "stop", usage: { input: 1500, output: 7, cached: 0 } });
    // 1500 * 3 + 7 * 15 = 4605 micro-dollars.
    expect(reply.costUsd).toBe(0.004605);

    const body = server.received[0]!.body;
    expect(body.system).toEqual([
      { type: "text", text: "You keep notes." },
      { type: "text", text: "Summary of the earlier conversation:\nThe user likes short notes." },
    ]);
    const messages = body.messages as { role: string; content: Record<string, unknown>[] }[];
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(messages[1]!.content).toEqual([
      { type: "text", text: "Saving." },
      { type: "tool_use", id: "toolu_01Abc", name: "files__write", input: { path: "notes/a.md", content: "héllo" } },
      { type: "tool_use", id: "toolu_02Def", name: "files__write", input: { path: "/etc/passwd", content: "x" } },
    ]);
    expect(messages[2]!.content).toMatchObject([
      { type: "tool_result", tool_use_id: "toolu_01Abc", content: JSON.stringify({ path: "notes/a.md", bytes: 6 }) },
      { type: "tool_result", tool_use_id: "toolu_02Def", content: "Denied by policy: paths must be relative", is_error: true },
    ]);
    expect(messages[2]!.content[0]!.is_error).toBeFalsy();
  });
});

describe("anthropic errors", () => {
  it("passes a 400 error body's message to the caller and does not retry it", async () => {
    const message = "messages.1.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_x";
    server.respond = jsonReply(400, { type: "error", error: { type: "invalid_request_error", message } });
    const err = await failure(call(PROMPT, { retries: 3 }));
    expect(err).toBeInstanceOf(ModelCallError);
    expect(err!.retryable).toBe(false);
    expect(err!.message).toBe(`model API error 400: ${message}`);
    expect(server.received).toHaveLength(1);
  });

  it("never shows the key in an error, even when the server echoes it", async () => {
    server.respond = (req, res, i) =>
      jsonReply(401, {
        type: "error",
        error: { type: "authentication_error", message: `invalid x-api-key: ${String(req.headers["x-api-key"])}` },
      })(req, res, i);
    const err = await failure(call(PROMPT, { retries: 3 }));
    expect(err).toBeInstanceOf(ModelCallError);
    expect(err!.message).toBe("model API error 401: invalid x-api-key: [redacted]");
    expect(JSON.stringify({ message: err!.message, stack: err!.stack })).not.toContain(KEY);
    expect(server.received).toHaveLength(1);
    expect(server.received[0]!.headers["x-api-key"]).toBe(KEY);
  });

  it("retries a 529 overloaded_error response, then succeeds", async () => {
    server.respond = (req, res, i) =>
      i === 0
        ? jsonReply(529, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } })(req, res, i)
        : writeSse(res, sseText(textStream("ok")));
    const retries: string[] = [];
    const reply = await call(PROMPT, { retries: 2, onRetry: (_a, _d, e) => retries.push(e) });
    expect(reply.text).toBe("ok");
    expect(retries).toEqual(["model API error 529: Overloaded"]);
    expect(server.received).toHaveLength(2);
  });

  it("retries an overloaded_error event that is the stream's first event", async () => {
    server.respond = (_req, res, i) =>
      writeSse(
        res,
        sseText(i === 0 ? [ev({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })] : textStream("ok")),
      );
    const reply = await call(PROMPT, { retries: 2 });
    expect(reply.text).toBe("ok");
    expect(server.received).toHaveLength(2);
  });

  // BUG (call-model.ts, classify): Anthropic documents that an error such as
  // overloaded_error can arrive as an SSE `error` event after a 200 and
  // message_start. @ai-sdk/anthropic passes it on as a stream part whose
  // `error` is the plain object { type, message }, not an Error; callModel
  // throws it as is and classify() makes it String(err) = "[object Object]",
  // not retryable. The turn fails at once with a message that says nothing.
  it("retries an overloaded_error event that arrives after message_start, keeping the provider's message", async () => {
    server.respond = (_req, res, i) =>
      writeSse(
        res,
        sseText(
          i === 0
            ? [
                messageStart({ input_tokens: 10 }),
                ev({ type: "ping" }),
                ev({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
              ]
            : textStream("ok"),
        ),
      );
    const retries: string[] = [];
    const result = await call(PROMPT, { retries: 2, onRetry: (_a, _d, e) => retries.push(e) }).then(
      (r) => r,
      (e: unknown) => e as Error,
    );
    expect(result instanceof Error ? result.message : "succeeded").not.toContain("[object Object]");
    expect(retries).toHaveLength(1);
    expect(retries[0]).toContain("Overloaded");
    expect(result).toMatchObject({ text: "ok" });
    expect(server.received).toHaveLength(2);
  });
});
