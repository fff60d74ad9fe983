/**
 * `provider: openai` (the Responses API) driven end to end through resolveModel
 * and callModel against a real loopback server that speaks the documented
 * Responses streaming wire format (POST /v1/responses, `event:`/`data:` SSE
 * frames with sequence numbers), its bytes cut at awkward boundaries.
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

const KEY = "sk-test-responses-5ecret";
const REF = "openai/gpt-4o";

let server: Loopback;
beforeAll(async () => {
  server = await startLoopback();
});
afterAll(() => server.close());
beforeEach(() => server.reset());

function config(entry: Partial<ModelEntry> = {}) {
  return {
    models: { [REF]: { provider: "openai" as const, model: "gpt-4o", base_url: server.baseUrl, api_key: KEY, ...entry } },
    dir: mkdtempSync(join(tmpdir(), "wardrik-responses-")),
  };
}

const WRITE_TOOL: LanguageModelV3FunctionTool = {
  type: "function",
  name: "files__write",
  description: "Write a file in the agent's workspace",
  inputSchema: {
    type: "object",
    properties: { path: { type: "string", description: "relative path" }, content: { type: "string" } },
    required: ["path", "content"],
    additionalProperties: false,
  },
};

const PROMPT: LanguageModelV3Prompt = [
  { role: "system", content: "You keep notes." },
  { role: "user", content: [{ type: "text", text: "Save a note" }] },
];

const ARGS_PIECES = ['{"path": "notes/a', '.md", "content": "héllo \\"q\\"\\n', 'line 2"}'];
const ARGS = ARGS_PIECES.join("");

/** The events of one Responses stream, numbered as the API numbers them. */
function numbered(events: Record<string, unknown>[]): SseEvent[] {
  return events.map((data, i) => ({ event: data.type as string, data: { ...data, sequence_number: i } }));
}

const RESPONSE = { id: "resp_loop1", object: "response", created_at: 1_760_000_000, model: "gpt-4o-2024-08-06", output: [], usage: null };

/** A reply with text, then a function call whose arguments arrive in pieces. */
function toolCallStream(): SseEvent[] {
  const message = { id: "msg_1", type: "message", role: "assistant" };
  const call = { id: "fc_1", type: "function_call", call_id: "call_abc", name: "files__write" };
  return numbered([
    { type: "response.created", response: { ...RESPONSE, status: "in_progress" } },
    { type: "response.in_progress", response: { ...RESPONSE, status: "in_progress" } },
    { type: "response.output_item.added", output_index: 0, item: { ...message, status: "in_progress", content: [] } },
    {
      type: "response.content_part.added",
      item_id: "msg_1",
      output_index: 0,
      content_index: 0,
      part: { type: "output_text", text: "", annotations: [] },
    },
    { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "Hello, ", logprobs: [] },
    { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "wörld 🌍", logprobs: [] },
    { type: "response.output_text.done", item_id: "msg_1", output_index: 0, content_index: 0, text: "Hello, wörld 🌍", logprobs: [] },
    {
      type: "response.content_part.done",
      item_id: "msg_1",
      output_index: 0,
      content_index: 0,
      part: { type: "output_text", text: "Hello, wörld 🌍", annotations: [] },
    },
    {
      type: "response.output_item.done",
      output_index: 0,
      item: { ...message, status: "completed", content: [{ type: "output_text", text: "Hello, wörld 🌍", annotations: [] }] },
    },
    { type: "response.output_item.added", output_index: 1, item: { ...call, status: "in_progress", arguments: "" } },
    ...ARGS_PIECES.map((delta) => ({ type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: 1, delta })),
    { type: "response.function_call_arguments.done", item_id: "fc_1", output_index: 1, arguments: ARGS },
    { type: "response.output_item.done", output_index: 1, item: { ...call, status: "completed", arguments: ARGS } },
    {
      type: "response.completed",
      response: {
        ...RESPONSE,
        status: "completed",
        incomplete_details: null,
        usage: {
          input_tokens: 1234,
          input_tokens_details: { cached_tokens: 1024 },
          output_tokens: 56,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: 1290,
        },
      },
    },
  ]);
}

/** A plain text reply. */
function textStream(
  text: string,
  usage = { input_tokens: 900, input_tokens_details: { cached_tokens: 0 }, output_tokens: 4, total_tokens: 904 },
): SseEvent[] {
  const message = { id: "msg_2", type: "message", role: "assistant" };
  return numbered([
    { type: "response.created", response: { ...RESPONSE, status: "in_progress" } },
    { type: "response.output_item.added", output_index: 0, item: { ...message, status: "in_progress", content: [] } },
    { type: "response.output_text.delta", item_id: "msg_2", output_index: 0, content_index: 0, delta: text, logprobs: [] },
    {
      type: "response.output_item.done",
      output_index: 0,
      item: { ...message, status: "completed", content: [{ type: "output_text", text, annotations: [] }] },
    },
    { type: "response.completed", response: { ...RESPONSE, status: "completed", incomplete_details: null, usage } },
  ]);
}

const call = (
  model: ReturnType<typeof resolveModel>,
  prompt: LanguageModelV3Prompt,
  extra: { retries?: number; onDelta?: (d: string) => void } = {},
) =>
  callModel({
    model: model.model,
    prompt,
    tools: [WRITE_TOOL],
    signal: new AbortController().signal,
    retries: extra.retries ?? 0,
    price: model.price,
    backoffMs: 1,
    ...(extra.onDelta ? { onDelta: extra.onDelta } : {}),
  });

describe.each([
  { eol: "\n", name: "LF" },
  { eol: "\r\n", name: "CRLF" },
])("openai (Responses API) over a loopback server, $name line ends", ({ eol }) => {
  it("streams text deltas, a tool call with parsed args and usage with cached tokens, and costs it from the price table", async () => {
    server.respond = (_req, res) => writeSse(res, sseText(toolCallStream(), eol));
    const resolved = resolveModel(REF, config(), { env: {} });
    expect(resolved).toMatchObject({
      provider: "openai",
      modelId: "gpt-4o",
      contextWindow: 128_000,
      price: { input: 2.5, output: 10, cached_input: 1.25 },
    });
    expect(resolved.model.provider).toBe("openai.responses");

    const deltas: string[] = [];
    const reply = await call(resolved, PROMPT, { onDelta: (d) => deltas.push(d) });

    // Each delta arrives whole and in order, however the bytes were cut.
    expect(deltas).toEqual(["Hello, ", "wörld 🌍"]);
    expect(reply.text).toBe("Hello, wörld 🌍");
    expect(reply.toolCalls).toEqual([{ toolCallId: "call_abc", toolName: "files__write", input: ARGS }]);
    expect(JSON.parse(reply.toolCalls[0]!.input)).toEqual({ path: "notes/a.md", content: 'héllo "q"\nline 2' });
    expect(reply.finishReason).toBe("tool-calls");
    expect(reply.usage).toEqual({ input: 1234, output: 56, cached: 1024 });
    // gpt-4o: $2.50 input, $1.25 cached input, $10 output per million tokens.
    // (1234 - 1024) * 2.5 + 1024 * 1.25 + 56 * 10 = 525 + 1280 + 560 = 2365 micro-dollars.
    expect(reply.costUsd).toBe(0.002365);

    expect(server.received).toHaveLength(1);
    const req = server.received[0]!;
    expect(req.method).toBe("POST");
    expect(req.url).toBe("/v1/responses");
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.headers["content-type"]).toMatch(/^application\/json/);
    expect(req.body).toMatchObject({
      model: "gpt-4o",
      stream: true,
      input: [
        { role: "system", content: "You keep notes." },
        { role: "user", content: [{ type: "input_text", text: "Save a note" }] },
      ],
    });
    expect(req.body.input).toHaveLength(2);
    const tools = req.body.tools as Record<string, unknown>[];
    expect(tools).toHaveLength(1);
    expect(tools[0]).toMatchObject({
      type: "function",
      name: "files__write",
      description: WRITE_TOOL.description,
      parameters: WRITE_TOOL.inputSchema,
    });
  });
});

describe("openai (Responses API) requests", () => {
  it("sends a stored tool round back as function_call and function_call_output items", async () => {
    server.respond = (_req, res) => writeSse(res, sseText(textStream("Saved.")));
    const history: StoredMessage[] = [
      { role: "user", text: "Save a note", input: "Save a note" },
      {
        role: "assistant",
        text: "Saving.",
        toolCalls: [
          { modelCallId: "call_abc", callId: "call_01", tool: "files/write", args: { path: "notes/a.md", content: "héllo" } },
          { modelCallId: "call_def", callId: "call_02", tool: "files/write", args: { path: "/etc/passwd", content: "x" } },
        ],
      },
      {
        role: "tool",
        results: [
          { modelCallId: "call_abc", callId: "call_01", tool: "files/write", isError: false, output: { path: "notes/a.md", bytes: 6 } },
          {
            modelCallId: "call_def",
            callId: "call_02",
            tool: "files/write",
            isError: true,
            output: "Denied by policy: paths must be relative",
          },
        ],
      },
    ];
    const prompt = new PromptCache(history.map((message, i) => ({ seq: i + 1, message }))).build("You keep notes.");
    const resolved = resolveModel(REF, config(), { env: {} });
    const reply = await call(resolved, prompt);
    expect(reply).toMatchObject({ text: "Saved.", toolCalls: [], finishReason: "stop", usage: { input: 900, output: 4, cached: 0 } });
    // No cached tokens: 900 * 2.5 + 4 * 10 = 2290 micro-dollars.
    expect(reply.costUsd).toBe(0.00229);

    expect(server.received).toHaveLength(1);
    const input = server.received[0]!.body.input as Record<string, unknown>[];
    expect(input).toMatchObject([
      { role: "system", content: "You keep notes." },
      { role: "user", content: [{ type: "input_text", text: "Save a note" }] },
      { role: "assistant", content: [{ type: "output_text", text: "Saving." }] },
      { type: "function_call", call_id: "call_abc", name: "files__write" },
      { type: "function_call", call_id: "call_def", name: "files__write" },
      { type: "function_call_output", call_id: "call_abc", output: JSON.stringify({ path: "notes/a.md", bytes: 6 }) },
      { type: "function_call_output", call_id: "call_def", output: "Denied by policy: paths must be relative" },
    ]);
    expect(input).toHaveLength(7);
    expect(JSON.parse(input[3]!.arguments as string)).toEqual({ path: "notes/a.md", content: "héllo" });
    expect(JSON.parse(input[4]!.arguments as string)).toEqual({ path: "/etc/passwd", content: "x" });
  });
});

describe("openai (Responses API) errors", () => {
  it("passes a 400 error body's message to the caller and does not retry it", async () => {
    const message = "Invalid schema for function 'files__write': 'additionalProperties' is required to be supplied and to be false.";
    server.respond = jsonReply(400, {
      error: { message, type: "invalid_request_error", param: "tools[0].parameters", code: "invalid_function_parameters" },
    });
    const resolved = resolveModel(REF, config(), { env: {} });
    const err = await call(resolved, PROMPT, { retries: 3 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ModelCallError);
    expect((err as ModelCallError).retryable).toBe(false);
    expect((err as ModelCallError).message).toBe(`model API error 400: ${message}`);
    expect(server.received).toHaveLength(1);
  });

  it("keeps the API key out of the error when a 401 body echoes it", async () => {
    server.respond = (req, res) =>
      jsonReply(401, {
        error: {
          message: `Incorrect API key provided: ${String(req.headers.authorization).slice(7)}.`,
          type: "invalid_request_error",
          code: "invalid_api_key",
        },
      })(req, res, 0);
    const resolved = resolveModel(REF, config(), { env: {} });
    const err = (await call(resolved, PROMPT, { retries: 3 }).then(
      () => undefined,
      (e: unknown) => e,
    )) as ModelCallError;
    expect(err.message).toBe("model API error 401: Incorrect API key provided: [redacted].");
    expect(JSON.stringify({ message: err.message, stack: err.stack })).not.toContain(KEY);
    expect(server.received).toHaveLength(1);
  });

  it("retries a 500 and then succeeds", async () => {
    server.respond = (req, res, i) =>
      i === 0
        ? jsonReply(500, { error: { message: "The server had an error while processing your request.", type: "server_error" } })(
            req,
            res,
            i,
          )
        : writeSse(res, sseText(textStream("ok")));
    const resolved = resolveModel(REF, config(), { env: {} });
    const reply = await call(resolved, PROMPT, { retries: 2 });
    expect(reply.text).toBe("ok");
    expect(server.received).toHaveLength(2);
  });

  // BUG (call-model.ts, classify): an `error` event that arrives after output
  // has started reaches callModel as a stream part whose `error` is a plain
  // object ({ message, type, code, statusCode, isRetryable, data }), not an
  // Error. callModel throws it as is, and classify() turns it into
  // String(err) = "[object Object]": the provider's message is lost.
  it("reports the provider's message when the stream fails after output has started", async () => {
    const events = textStream("Partial answ").slice(0, 3);
    const failure = {
      type: "error",
      code: "server_error",
      message: "The server had an error while processing your request. Sorry about that!",
      param: null,
    };
    server.respond = (_req, res) => writeSse(res, sseText([...events, { event: "error", data: { ...failure, sequence_number: 3 } }]));
    const resolved = resolveModel(REF, config(), { env: {} });
    const err = await call(resolved, PROMPT, { retries: 0 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ModelCallError);
    expect((err as Error).message).not.toContain("[object Object]");
    expect((err as Error).message).toContain("The server had an error while processing your request.");
  });
});
