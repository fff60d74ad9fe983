/**
 * callModel's retries against a real loopback Chat Completions server (429
 * with Retry-After, 5xx, refused connections, dropped streams, a 401), and one
 * real turn through the Runtime with a loopback-backed model: model.replied
 * carries tokens and cost, deltas reach hooks.onDelta in order, and the stored
 * history holds the whole message.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AGENT_DEFAULTS, type AgentDefinition, type ModelEntry } from "../../src/config/types.js";
import { EventBus, type StoredEvent } from "../../src/events/event-bus.js";
import { systemClock, ulidIds } from "../../src/ids.js";
import { resolveModel, type ResolvedModel } from "../../src/models/index.js";
import { compilePolicy, decide } from "../../src/policy/index.js";
import { callModel, ModelCallError, retryHint, type ModelReply } from "../../src/runtime/call-model.js";
import { Runtime } from "../../src/runtime/runtime.js";
import type { RuntimeHooks } from "../../src/runtime/types.js";
import { SqliteDb } from "../../src/store/sqlite-db.js";
import { Store } from "../../src/store/store.js";
import { FilesToolset } from "../../src/tools/files-toolset.js";
import { ToolRegistry } from "../../src/tools/tool-registry.js";
import { chunk, splitAwkwardly, sse, startOpenAiLoopback, type LoopbackReply, type OpenAiLoopback } from "../helpers/openai-loopback.js";
import { startLoopback, writeSse } from "./sse-loopback.js";

const KEY = "sk-retries-5ecret-key";

let server: OpenAiLoopback;
/** performance.now() of each request's arrival, in order. */
let arrivals: number[] = [];

beforeAll(async () => {
  server = await startOpenAiLoopback();
});
beforeEach(() => {
  server.requests.length = 0;
  arrivals = [];
});

/** Sets the server's answers: the i-th request gets replies[min(i, last)]. */
function answer(...replies: (LoopbackReply | ((i: number) => LoopbackReply))[]): void {
  server.handle((_req, i) => {
    arrivals.push(performance.now());
    const r = replies[Math.min(i, replies.length - 1)]!;
    return typeof r === "function" ? r(i) : r;
  });
}

const errorReply = (status: number, message: string, headers: Record<string, string> = {}): LoopbackReply => ({
  status,
  headers: { "content-type": "application/json", ...headers },
  pieces: [JSON.stringify({ error: { message, type: status === 429 ? "rate_limit_error" : "server_error" } })],
});

function usage(prompt: number, completion: number, cached: number): Record<string, unknown> {
  return {
    ...chunk({}),
    choices: [],
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: cached },
    },
  };
}

const textReply = (pieces: string[], u = usage(20, 5, 0)): LoopbackReply => ({
  headers: { "content-type": "text/event-stream" },
  pieces: splitAwkwardly(
    sse([chunk({ role: "assistant", content: "" }), ...pieces.map((content) => chunk({ content })), chunk({}, "stop"), u]),
    11,
  ),
});

function model(baseUrl = server.baseUrl, entry: Partial<ModelEntry> = {}): ResolvedModel {
  return resolveModel(
    "loop",
    {
      models: { loop: { provider: "openai-compatible", model: "qwen2.5:7b", base_url: baseUrl, api_key: KEY, ...entry } },
      dir: "/nowhere",
    },
    { env: {} },
  );
}

const PROMPT: LanguageModelV3Prompt = [{ role: "user", content: [{ type: "text", text: "hi" }] }];

interface Attempt {
  attempt: number;
  delayMs: number;
  error: string;
}

function run(retries: number, m = model()): { result: Promise<ModelReply>; retried: Attempt[] } {
  const retried: Attempt[] = [];
  const result = callModel({
    model: m.model,
    prompt: PROMPT,
    tools: [],
    signal: new AbortController().signal,
    retries,
    backoffMs: 1,
    onRetry: (attempt, delayMs, error) => retried.push({ attempt, delayMs, error }),
  });
  return { result, retried };
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (e: unknown) => e as ModelCallError,
  );

/** One Chat Completions SSE frame. */
const frame = (delta: Record<string, unknown>, finish: string | null = null) => `data: ${JSON.stringify(chunk(delta, finish))}\n\n`;

/** Headers and the first frames, then the connection dies mid-frame (a proxy or the server went away). */
async function cutOff(res: ServerResponse): Promise<void> {
  await writeSse(res, frame({ role: "assistant", content: "" }) + frame({ content: "Hel" }) + 'data: {"id":"chatcm', { end: false });
  res.socket?.destroy();
}

describe("callModel retries against a loopback server", () => {
  it("waits out a 429's Retry-After, then succeeds", async () => {
    answer(errorReply(429, "Rate limit reached for requests", { "retry-after": "1" }), textReply(["Hel", "lo"]));
    const { result, retried } = run(2);
    const reply = await result;
    expect(reply.text).toBe("Hello");
    expect(server.requests).toHaveLength(2);
    // backoffMs is 1 ms: only the header explains a wait of about a second.
    expect(arrivals[1]! - arrivals[0]!).toBeGreaterThanOrEqual(900);
    expect(arrivals[1]! - arrivals[0]!).toBeLessThan(5_000);
    expect(retried).toEqual([{ attempt: 1, delayMs: 1000, error: "model API error 429: Rate limit reached for requests" }]);
  });

  it("retries a 503 twice and succeeds on the third attempt", async () => {
    answer(errorReply(503, "The engine is currently overloaded"), errorReply(503, "The engine is currently overloaded"), textReply(["ok"]));
    const { result, retried } = run(2);
    expect((await result).text).toBe("ok");
    expect(server.requests).toHaveLength(3);
    expect(retried.map((r) => r.attempt)).toEqual([1, 2]);
    // Exponential backoff with jitter from a 1 ms base: between half and all of 1, then 2 ms.
    expect(retried[0]!.delayMs).toBeGreaterThanOrEqual(0.5);
    expect(retried[0]!.delayMs).toBeLessThanOrEqual(1);
    expect(retried[1]!.delayMs).toBeGreaterThanOrEqual(1);
    expect(retried[1]!.delayMs).toBeLessThanOrEqual(2);
  });

  it("gives up after retries, naming the status and the attempts", async () => {
    answer(errorReply(503, "The engine is currently overloaded"));
    const { result, retried } = run(2);
    const err = await failure(result);
    expect(err).toBeInstanceOf(ModelCallError);
    expect(err.retryable).toBe(true);
    expect(err.message).toBe("model API error 503: The engine is currently overloaded (after 3 attempts)");
    expect(server.requests).toHaveLength(3);
    expect(retried).toHaveLength(2);
  });

  it("retries a refused connection, then fails with a clear network message", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));

    const { result, retried } = run(2, model(`http://127.0.0.1:${port}/v1`));
    const err = await failure(result);
    expect(err).toBeInstanceOf(ModelCallError);
    expect(err.retryable).toBe(true);
    expect(retried).toHaveLength(2);
    expect(err.message).toMatch(/ECONNREFUSED/);
    expect(err.message).toContain(`127.0.0.1:${port}`);
    expect(err.message).toMatch(/\(after 3 attempts\)$/);
    expect(err.message).not.toContain(KEY);
  });

  it("retries a stream the server cut off midway; the reply holds only the attempt that succeeded", async () => {
    const dropping = await startLoopback();
    try {
      dropping.respond = (_req, res, i) =>
        i === 0
          ? cutOff(res)
          : writeSse(
              res,
              frame({ role: "assistant", content: "" }) + frame({ content: "Hello again" }) + frame({}, "stop") + "data: [DONE]\n\n",
            );
      const { result, retried } = run(1, model(dropping.baseUrl));
      const reply = await result;
      expect(reply.text).toBe("Hello again");
      expect(dropping.received).toHaveLength(2);
      expect(retried).toHaveLength(1);
    } finally {
      await dropping.close();
    }
  });

  // BUG (call-model.ts, classify): a connection lost mid-stream reaches
  // callModel as APICallError("Failed to process successful response",
  // statusCode 200, isRetryable true, cause TypeError("terminated") caused by
  // SocketError UND_ERR_SOCKET). classify() takes the APICallError branch and
  // reports "model API error 200: Failed to process successful response":
  // retried, but the message blames an API error with status 200 instead of
  // saying the connection was lost.
  it("names a connection lost mid-stream as a network error, on retry and on failure", async () => {
    const dropping = await startLoopback();
    try {
      dropping.respond = (_req, res) => cutOff(res);
      const { result, retried } = run(1, model(dropping.baseUrl));
      const err = await failure(result);
      expect(dropping.received).toHaveLength(2);
      expect(err.retryable).toBe(true);
      expect(err.message).toMatch(/\(after 2 attempts\)$/);
      for (const message of [retried[0]!.error, err.message]) {
        expect(message).toMatch(/network|connection/i);
        expect(message).not.toContain("error 200");
      }
    } finally {
      await dropping.close();
    }
  });

  it("fails a 401 at once with the provider's message", async () => {
    answer(
      errorReply(
        401,
        "Incorrect API key provided: sk-re**********key. You can find your API key at https://platform.openai.com/account/api-keys.",
      ),
    );
    const { result, retried } = run(3);
    const err = await failure(result);
    expect(err).toBeInstanceOf(ModelCallError);
    expect(err.retryable).toBe(false);
    expect(err.message).toBe(
      "model API error 401: Incorrect API key provided: sk-re**********key. You can find your API key at https://platform.openai.com/account/api-keys.",
    );
    expect(server.requests).toHaveLength(1);
    expect(retried).toEqual([]);
  });

  // BUG (call-model.ts, classify): OpenAI-compatible servers (vLLM, llama.cpp,
  // Ollama) report a failure that happens after the 200 as a
  // `data: {"error": {...}}` frame. The provider passes the parsed object on as
  // a stream part's `error`; it is not an Error, so classify() reports
  // String(err) = "[object Object]" and the provider's message is lost.
  it("keeps the provider's message when the stream carries an error frame", async () => {
    answer({
      headers: { "content-type": "text/event-stream" },
      pieces: splitAwkwardly(
        [
          `data: ${JSON.stringify(chunk({ role: "assistant", content: "" }))}\n\n`,
          `data: ${JSON.stringify({ error: { message: "CUDA out of memory while decoding", type: "InternalServerError", code: 500 } })}\n\n`,
        ],
        9,
      ),
    });
    const { result } = run(0);
    const err = await failure(result);
    expect(err.message).not.toContain("[object Object]");
    expect(err.message).toContain("CUDA out of memory while decoding");
  });
});

describe("the provider's hints on how long to wait", () => {
  it("reads retry-after-ms first, then retry-after in seconds or as an HTTP date", () => {
    const now = Date.parse("2026-03-01T10:00:00Z");
    expect(retryHint({ "retry-after-ms": "250", "retry-after": "7" }, now)).toBe(250);
    expect(retryHint({ "Retry-After-Ms": "12.5" }, now)).toBe(12.5);
    expect(retryHint({ "retry-after-ms": "soon", "retry-after": "7" }, now)).toBe(7000);
    expect(retryHint({ "retry-after": "1.5" }, now)).toBe(1500);
    expect(retryHint({ "retry-after": "Sun, 01 Mar 2026 10:00:30 GMT" }, now)).toBe(30_000);
    // A date already past, or nothing readable, is no hint.
    expect(retryHint({ "retry-after": "Sun, 01 Mar 2026 09:59:00 GMT" }, now)).toBeUndefined();
    expect(retryHint({ "retry-after": "whenever" }, now)).toBeUndefined();
    expect(retryHint({}, now)).toBeUndefined();
  });

  it("waits what retry-after-ms says, ahead of retry-after", async () => {
    answer(errorReply(429, "Slow down", { "retry-after-ms": "300", "retry-after": "20" }), textReply(["ok"]));
    const { result, retried } = run(1);
    expect((await result).text).toBe("ok");
    expect(retried.map((r) => r.delayMs)).toEqual([300]);
    expect(arrivals[1]! - arrivals[0]!).toBeGreaterThanOrEqual(280);
  });

  it("waits until a retry-after HTTP date", async () => {
    // HTTP dates have whole seconds: two seconds from now is between one and two seconds away.
    answer(() => errorReply(503, "Busy", { "retry-after": new Date(Date.now() + 2_000).toUTCString() }), textReply(["ok"]));
    const { result, retried } = run(1);
    expect((await result).text).toBe("ok");
    expect(retried[0]!.delayMs).toBeGreaterThan(900);
    expect(retried[0]!.delayMs).toBeLessThanOrEqual(2_000);
    expect(arrivals[1]! - arrivals[0]!).toBeGreaterThanOrEqual(retried[0]!.delayMs - 20);
  });

  it("ignores a hint of 60 s or more, and backs off instead", async () => {
    answer(
      errorReply(429, "Come back tomorrow", { "retry-after": "86400" }),
      errorReply(429, "Come back in a minute", { "retry-after-ms": "60000" }),
      textReply(["ok"]),
    );
    const { result, retried } = run(2);
    expect((await result).text).toBe("ok");
    // Backoff from the 1 ms test base: at most 1, then 2 ms.
    expect(retried.map((r) => r.delayMs <= 2 ** (r.attempt - 1))).toEqual([true, true]);
  });
});

describe("a cancel during a retry's wait", () => {
  /** A call whose server asks for a 30 s wait; `onRetry` runs just before the wait begins. */
  function waitingCall(signal: AbortSignal, onRetry?: () => void) {
    answer(errorReply(429, "Wait half a minute", { "retry-after": "30" }), textReply(["too late"]));
    const t0 = performance.now();
    const result = callModel({
      model: model().model,
      prompt: PROMPT,
      tools: [],
      signal,
      retries: 2,
      backoffMs: 1,
      ...(onRetry ? { onRetry } : {}),
    });
    return { t0, result: failure(result) };
  }

  it("ends the wait at once with the cancel's reason", async () => {
    const ac = new AbortController();
    const reason = new Error("turn cancelled");
    const { t0, result } = waitingCall(ac.signal, () => setTimeout(() => ac.abort(reason), 50));
    expect(await result).toBe(reason);
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(server.requests).toHaveLength(1);
  });

  it("ends it too when the cancel came before the wait began", async () => {
    const ac = new AbortController();
    const reason = new Error("turn cancelled");
    const { t0, result } = waitingCall(ac.signal, () => ac.abort(reason));
    expect(await result).toBe(reason);
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(server.requests).toHaveLength(1);
  });

  it("makes no request at all for a call cancelled before it started", async () => {
    const ac = new AbortController();
    const reason = new Error("turn cancelled");
    ac.abort(reason);
    const { result } = waitingCall(ac.signal);
    expect(await result).toBe(reason);
    expect(server.requests).toHaveLength(0);
  });
});

// ---- a real turn through the Runtime ----

interface LoopRuntime {
  runtime: Runtime;
  store: Store;
  events: StoredEvent[];
  deltas: { agent: string; run: string; text: string }[];
  close(): Promise<void>;
}

/** The runtime harness's wiring, with hooks.resolveModel returning a loopback-backed model. */
function loopRuntime(resolved: ResolvedModel): LoopRuntime {
  const dir = mkdtempSync(join(tmpdir(), "wardrik-rt-loop-"));
  const db = new SqliteDb(join(dir, "wardrik.db"), { synchronous: "NORMAL" });
  const bus = new EventBus();
  const store = new Store(db, bus, ulidIds(), systemClock);
  const events: StoredEvent[] = [];
  bus.subscribe("*", (e) => events.push(e));
  const deltas: LoopRuntime["deltas"] = [];
  const policy = compilePolicy({ name: "allow-all", rules: [{ tool: "*", decision: "allow" }] });
  const hooks: RuntimeHooks = {
    resolveModel: () => resolved,
    decide: (call) => decide(policy, { tool: call.tool, args: call.args, readOnly: call.readOnly }),
    budget: () => ({}),
    onDelta: (agent, run, text) => deltas.push({ agent: agent.id, run, text }),
  };
  const registry = new ToolRegistry();
  registry.add(new FilesToolset(db, systemClock));
  const runtime = new Runtime(store, registry, hooks, { toolTimeoutMs: 60_000, modelBackoffMs: 1, sleepCheckMs: 1000 });
  return {
    runtime,
    store,
    events,
    deltas,
    close: async () => {
      await runtime.close();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function agentDef(name: string, extra: Partial<AgentDefinition> = {}): AgentDefinition {
  return {
    name,
    description: "test agent",
    title: name,
    tools: ["*"],
    max_iterations: AGENT_DEFAULTS.max_iterations,
    timeout: AGENT_DEFAULTS.timeout,
    retries: AGENT_DEFAULTS.retries,
    idle_timeout: AGENT_DEFAULTS.idle_timeout,
    instructions: "You keep notes.",
    model: "loop",
    ...extra,
  };
}

function waitFor(rt: LoopRuntime, pred: (e: StoredEvent) => boolean, timeoutMs = 15_000): Promise<StoredEvent> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const tick = () => {
      const found = rt.events.find(pred);
      if (found) return resolve(found);
      if (Date.now() > deadline) return reject(new Error("timed out waiting for an event"));
      setTimeout(tick, 5);
    };
    tick();
  });
}

const short = (e: StoredEvent) => e.type.replace("dev.wardrik.", "");

describe("a turn through the Runtime with a loopback model", () => {
  let rt: LoopRuntime | undefined;
  afterEach(async () => {
    await rt?.close();
    rt = undefined;
  });

  it("records tokens and cost in model.replied, streams deltas to onDelta in order, and stores the whole message", async () => {
    const toolArgs = JSON.stringify({ path: "notes/today.md", content: "buy milk" });
    const finalPieces = ["Saved ", "your note ", "to notes/", "today.md ", "✅"];
    answer(
      {
        headers: { "content-type": "text/event-stream" },
        pieces: splitAwkwardly(
          sse([
            chunk({ role: "assistant", content: "" }),
            chunk({ tool_calls: [{ index: 0, id: "call_w1", type: "function", function: { name: "files__write", arguments: "" } }] }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: toolArgs.slice(0, 15) } }] }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: toolArgs.slice(15) } }] }),
            chunk({}, "tool_calls"),
            usage(900, 30, 512),
          ]),
          13,
        ),
      },
      textReply(finalPieces, usage(1000, 40, 896)),
    );
    // openai-chat shares OpenAI's price table: gpt-4o is $2.50 / $1.25 cached / $10 per million.
    const resolved = model(server.baseUrl, { provider: "openai-chat", model: "gpt-4o" });
    expect(resolved.price).toEqual({ input: 2.5, output: 10, cached_input: 1.25 });
    rt = loopRuntime(resolved);
    const agent = await rt.runtime.createAgent("default", agentDef("scribe"));
    const queued = await rt.runtime.enqueue(agent, "main", "Note: buy milk");
    const started = await waitFor(rt, (e) => short(e) === "turn.started" && ((e.data.messages as string[]) ?? []).includes(queued.message));
    const end = await waitFor(rt, (e) => e.run === started.run && /turn\.(completed|failed|cancelled)$/.test(e.type));
    expect(end.data).toMatchObject({ reply: finalPieces.join("") });
    expect(short(end)).toBe("turn.completed");

    const replied = rt.events.filter((e) => short(e) === "model.replied" && e.run === started.run).map((e) => e.data);
    expect(replied).toHaveLength(2);
    // (900 - 512) * 2.5 + 512 * 1.25 + 30 * 10 = 970 + 640 + 300 = 1910 micro-dollars.
    expect(replied[0]).toMatchObject({
      model: "loop",
      iteration: 1,
      input_tokens: 900,
      output_tokens: 30,
      cached_tokens: 512,
      cost_usd: 0.00191,
      tool_calls: 1,
    });
    // (1000 - 896) * 2.5 + 896 * 1.25 + 40 * 10 = 260 + 1120 + 400 = 1780 micro-dollars.
    expect(replied[1]).toMatchObject({
      model: "loop",
      iteration: 2,
      input_tokens: 1000,
      output_tokens: 40,
      cached_tokens: 896,
      cost_usd: 0.00178,
      finish_reason: "stop",
    });
    expect(end.data.spend_usd).toBeCloseTo(0.00191 + 0.00178, 12);

    // Deltas arrive whole and in order, tagged with the agent and the run.
    expect(rt.deltas.map((d) => d.text)).toEqual(finalPieces);
    expect(rt.deltas.every((d) => d.agent === agent.id && d.run === started.run)).toBe(true);

    // The tool ran and its result went back to the model.
    const second = server.requests[1]!.body!;
    const toolMsg = second.messages.find((m) => m.role === "tool");
    expect(toolMsg).toMatchObject({ tool_call_id: "call_w1" });

    const conv = await rt.store.conversations.find(agent.id, "main");
    const history = await rt.store.conversations.history(conv!.id);
    expect(history.map((h) => h.message.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    const last = history.at(-1)!.message;
    expect(last).toEqual({ role: "assistant", text: "Saved your note to notes/today.md ✅", toolCalls: [] });
    const toolCall = history[1]!.message;
    expect(
      toolCall.role === "assistant" && toolCall.toolCalls.map((c) => ({ tool: c.tool, modelCallId: c.modelCallId, args: c.args })),
    ).toEqual([{ tool: "files/write", modelCallId: "call_w1", args: { path: "notes/today.md", content: "buy milk" } }]);
  });

  it("fails the turn at once on a 401, with the provider's message and no key", async () => {
    answer(errorReply(401, "Invalid authentication credentials"));
    rt = loopRuntime(model());
    const agent = await rt.runtime.createAgent("default", agentDef("scribe", { retries: 3 }));
    const queued = await rt.runtime.enqueue(agent, "main", "hi");
    const started = await waitFor(rt, (e) => short(e) === "turn.started" && ((e.data.messages as string[]) ?? []).includes(queued.message));
    const end = await waitFor(rt, (e) => e.run === started.run && /turn\.(completed|failed|cancelled)$/.test(e.type));
    expect(short(end)).toBe("turn.failed");
    expect(end.data.reason).toBe("The model call failed: model API error 401: Invalid authentication credentials");
    const failed = rt.events.find((e) => short(e) === "model.failed" && e.run === started.run);
    expect(failed?.data.error).toBe(end.data.reason);
    expect(server.requests).toHaveLength(1);
    expect(JSON.stringify(rt.events)).not.toContain(KEY);
  });
});
