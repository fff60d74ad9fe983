/**
 * Model resolution driven against a real loopback HTTP server that speaks the
 * OpenAI Chat Completions streaming wire format, with its bytes split at awkward
 * boundaries (mid-JSON, mid-line, mid-UTF-8 character).
 */
import { createServer } from "node:http";
import type { IncomingHttpHeaders, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { APICallError } from "@ai-sdk/provider";
import type { LanguageModelV3CallOptions, LanguageModelV3FunctionTool, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ModelEntry } from "../../src/config/types.js";
import { ModelConfigError, resolveModel } from "../../src/models/index.js";

const KEY = "sk-loopback-5ecret-do-not-log";

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

let server: Server;
let baseUrl: string;
let received: Received[] = [];
let respond: (req: Received, res: ServerResponse) => Promise<void>;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const r: Received = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>),
      };
      received.push(r);
      respond(r, res).catch((err: unknown) => res.destroy(err as Error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  received = [];
});

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1_760_000_000,
  model: "qwen2.5:7b",
  choices: [{ index: 0, delta, finish_reason: finish }],
});

function sseBody(includeUsage: boolean): Buffer {
  const events: unknown[] = [
    chunk({ role: "assistant", content: "" }),
    chunk({ content: "Hello, " }),
    chunk({ content: "wörld 🌍" }),
    chunk({ tool_calls: [{ index: 0, id: "call_abc", type: "function", function: { name: "files__write", arguments: "" } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"path": "notes/a' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '.md", "content": "héllo \\"q\\"\\n' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: 'line 2"}' } }] }),
    chunk({}, "tool_calls"),
  ];
  if (includeUsage) {
    events.push({
      ...chunk({}),
      choices: [],
      usage: { prompt_tokens: 57, completion_tokens: 21, total_tokens: 78, prompt_tokens_details: { cached_tokens: 12 } },
    });
  }
  const text = ": keep-alive\n\n" + events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("") + "data: [DONE]\n\n";
  return Buffer.from(text, "utf8");
}

/** Cuts `body` into small pieces of varying size, including one inside the 4-byte emoji. */
function awkwardPieces(body: Buffer): Buffer[] {
  const cuts = new Set<number>();
  const emoji = body.indexOf(Buffer.from("🌍"));
  cuts.add(emoji + 2);
  const sizes = [1, 7, 3, 13, 2, 29, 5, 64];
  for (let at = 0, i = 0; at < body.length; at += sizes[i++ % sizes.length]!) cuts.add(at);
  const sorted = [...cuts].filter((c) => c > 0 && c < body.length).sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let start = 0;
  for (const cut of sorted) {
    pieces.push(body.subarray(start, cut));
    start = cut;
  }
  pieces.push(body.subarray(start));
  return pieces;
}

async function streamChat(req: Received, res: ServerResponse): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.socket?.setNoDelay(true);
  const includeUsage = (req.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  for (const piece of awkwardPieces(sseBody(includeUsage))) {
    res.write(piece);
    await sleep(1);
  }
  res.end();
}

function jsonError(status: number, body: unknown, headers: Record<string, string> = {}) {
  return (_req: Received, res: ServerResponse) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
    return Promise.resolve();
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

const CALL: LanguageModelV3CallOptions = {
  prompt: [
    { role: "system", content: "You keep notes." },
    { role: "user", content: [{ type: "text", text: "Save a note" }] },
  ],
  tools: [WRITE_TOOL],
};

function configWith(entry: Partial<ModelEntry>): { models: Record<string, ModelEntry>; dir: string } {
  return {
    models: { local: { provider: "openai-compatible", model: "qwen2.5:7b", base_url: baseUrl, api_key: KEY, ...entry } },
    dir: mkdtempSync(join(tmpdir(), "wardrik-models-")),
  };
}

async function readAll(stream: ReadableStream<LanguageModelV3StreamPart>): Promise<LanguageModelV3StreamPart[]> {
  const parts: LanguageModelV3StreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

describe.each([
  { provider: "openai-compatible" as const, model: "qwen2.5:7b" },
  { provider: "openai-chat" as const, model: "gpt-4o" },
])("$provider over a loopback Chat Completions server", ({ provider, model }) => {
  it("streams text, a tool call with its full arguments, and usage", async () => {
    respond = streamChat;
    const resolved = resolveModel("local", configWith({ provider, model }), { env: {} });
    const { stream } = await resolved.model.doStream(CALL);
    const parts = await readAll(stream);

    expect(parts.filter((p) => p.type === "error")).toEqual([]);
    expect(parts.map((p) => (p.type === "text-delta" ? p.delta : "")).join("")).toBe("Hello, wörld 🌍");
    const calls = parts.filter((p) => p.type === "tool-call");
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ toolCallId: "call_abc", toolName: "files__write" });
    expect(JSON.parse(calls[0]!.input)).toEqual({ path: "notes/a.md", content: 'héllo "q"\nline 2' });
    const finish = parts.at(-1);
    expect(finish?.type).toBe("finish");
    if (finish?.type !== "finish") return;
    expect(finish.finishReason.unified).toBe("tool-calls");
    expect(finish.usage.inputTokens).toMatchObject({ total: 57, noCache: 45, cacheRead: 12 });
    expect(finish.usage.outputTokens.total).toBe(21);

    expect(received).toHaveLength(1);
    const req = received[0]!;
    expect(req.method).toBe("POST");
    expect(req.url).toBe("/v1/chat/completions");
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.body).toMatchObject({
      model,
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: "system", content: "You keep notes." },
        { role: "user", content: "Save a note" },
      ],
      tools: [
        { type: "function", function: { name: "files__write", description: WRITE_TOOL.description, parameters: WRITE_TOOL.inputSchema } },
      ],
    });
  });

  it("sends a tool result back as a tool message", async () => {
    respond = streamChat;
    const resolved = resolveModel("local", configWith({ provider, model }), { env: {} });
    const { stream } = await resolved.model.doStream({
      ...CALL,
      prompt: [
        ...CALL.prompt,
        {
          role: "assistant",
          content: [{ type: "tool-call", toolCallId: "call_abc", toolName: "files__write", input: { path: "a.md", content: "x" } }],
        },
        {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "call_abc",
              toolName: "files__write",
              output: { type: "json", value: { path: "a.md", bytes: 1 } },
            },
          ],
        },
      ],
    });
    await readAll(stream);
    const messages = received[0]!.body.messages as Record<string, unknown>[];
    expect(messages.slice(2)).toMatchObject([
      { role: "assistant", tool_calls: [{ id: "call_abc", type: "function", function: { name: "files__write" } }] },
      { role: "tool", tool_call_id: "call_abc", content: JSON.stringify({ path: "a.md", bytes: 1 }) },
    ]);
    const args = (messages[2] as { tool_calls: { function: { arguments: string } }[] }).tool_calls[0]!.function.arguments;
    expect(JSON.parse(args)).toEqual({ path: "a.md", content: "x" });
  });

  it("passes a 400 error body's message to the caller", async () => {
    const message = "This model's maximum context length is 32768 tokens. However, you requested 40000 tokens.";
    respond = jsonError(400, { error: { message, type: "invalid_request_error", param: "messages", code: "context_length_exceeded" } });
    const resolved = resolveModel("local", configWith({ provider, model }), { env: {} });
    const err = await resolved.model.doStream(CALL).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(APICallError.isInstance(err)).toBe(true);
    expect(err).toMatchObject({ statusCode: 400, isRetryable: false, message });
  });
});

describe("errors from the server", () => {
  it("marks 429 retryable and keeps retry-after", async () => {
    respond = jsonError(429, { error: { message: "Rate limit reached", type: "rate_limit_error" } }, { "retry-after": "3" });
    const resolved = resolveModel("local", configWith({}), { env: {} });
    const err = (await resolved.model.doGenerate(CALL).then(
      () => undefined,
      (e: unknown) => e,
    )) as APICallError;
    expect(err).toMatchObject({ statusCode: 429, isRetryable: true, message: "Rate limit reached" });
    expect(err.responseHeaders?.["retry-after"]).toBe("3");
  }, 60_000);

  it("keeps the API key out of an error even when the server echoes it", async () => {
    respond = (req, res) => jsonError(401, { error: { message: `Invalid key: ${String(req.headers.authorization)}` } })(req, res);
    const resolved = resolveModel("local", configWith({}), { env: {} });
    const err = (await resolved.model.doStream(CALL).then(
      () => undefined,
      (e: unknown) => e,
    )) as APICallError;
    expect(APICallError.isInstance(err)).toBe(true);
    expect(err.statusCode).toBe(401);
    expect(err.message).toBe("Invalid key: Bearer [redacted]");
    expect(JSON.stringify({ message: err.message, body: err.responseBody, data: err.data, stack: err.stack })).not.toContain(KEY);
  });
});

describe("resolveModel", () => {
  it("fails a keyless model at call time, naming the entry and no key", async () => {
    const config = { models: { local: { provider: "openai" as const, model: "gpt-4o" } }, dir: "/nowhere" };
    const env = { ANTHROPIC_API_KEY: "sk-ant-other-secret" };
    const resolved = resolveModel("local", config, { env });
    expect(resolved).toMatchObject({ provider: "openai", modelId: "gpt-4o", contextWindow: 128_000 });
    const err = await resolved.model.doStream(CALL).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(ModelConfigError.isInstance(err)).toBe(true);
    const message = (err as Error).message;
    expect(message).toBe('Model "local" (openai/gpt-4o) has no API key: set api_key in config.yaml models.local or OPENAI_API_KEY');
    expect(message).not.toContain("sk-");
    await expect(resolved.model.doGenerate(CALL)).rejects.toThrow(message);

    const byRef = resolveModel("anthropic/claude-sonnet-4-5", config, { env: {} });
    await expect(byRef.model.doStream(CALL)).rejects.toThrow(/^Model "anthropic\/claude-sonnet-4-5" has no API key: set ANTHROPIC_API_KEY/);
  });

  it("reads the key from the provider's environment variable", () => {
    const resolved = resolveModel("openai/gpt-4o-mini-2024-07-18", { models: {}, dir: "/nowhere" }, { env: { OPENAI_API_KEY: KEY } });
    expect(resolved).toMatchObject({
      provider: "openai",
      modelId: "gpt-4o-mini-2024-07-18",
      contextWindow: 128_000,
      price: { input: 0.15, output: 0.6 },
    });
    expect(resolved.model.provider).toBe("openai.responses");
  });

  it("lets config set context window and price", () => {
    const resolved = resolveModel("big", {
      models: {
        big: {
          provider: "anthropic",
          model: "claude-sonnet-4-5-20250929",
          api_key: KEY,
          context_window: 1_000_000,
          price: { input: 6, output: 22.5 },
        },
      },
      dir: "/nowhere",
    });
    expect(resolved).toMatchObject({ contextWindow: 1_000_000, price: { input: 6, output: 22.5 } });
    expect(
      resolveModel("anthropic/claude-sonnet-4-5-20250929", { models: {}, dir: "/nowhere" }, { env: { ANTHROPIC_API_KEY: KEY } }).price,
    ).toEqual({ input: 3, output: 15, cached_input: 0.3 });
  });

  it("names the ref when it is unknown or incomplete", () => {
    const config = { models: { local: { provider: "openai-compatible" as const, model: "m" } }, dir: "/nowhere" };
    expect(() => resolveModel("gpt-4o", config)).toThrow(/Unknown model "gpt-4o": .*\(local\)/);
    expect(() => resolveModel("mistral/large", config)).toThrow(/Unknown model "mistral\/large"/);
    expect(() => resolveModel("local", config)).toThrow('Model "local" (openai-compatible/m) needs base_url: set models.local.base_url');
  });

  it("finds scripts in options, then <dir>/scripts, then the built-ins", async () => {
    const dir = mkdtempSync(join(tmpdir(), "wardrik-scripts-"));
    mkdirSync(join(dir, "scripts"));
    writeFileSync(join(dir, "scripts", "echo.yaml"), "steps:\n  - text: 'from file: {{message}}'\n");
    const config = { models: { fake: { provider: "script" as const, model: "given" } }, dir };
    const text = async (ref: string) => {
      const { content } = await resolveModel(ref, config, { scripts: { given: { steps: [{ text: "given" }] } } }).model.doGenerate(CALL);
      return content[0]?.type === "text" ? content[0].text : undefined;
    };
    expect(await text("fake")).toBe("given");
    expect(await text("script/echo")).toBe("from file: Save a note");
    expect(await text("script/demo")).toBeUndefined();
    expect(() => resolveModel("script/nope", config)).toThrow(
      /no script "nope": .*scripts\/nope\.yaml does not exist .*built-in: echo, demo/,
    );
    expect(() => resolveModel("script/../x", config)).toThrow(/not a valid script name/);
  });
});
