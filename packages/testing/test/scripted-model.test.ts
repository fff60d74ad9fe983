import { APICallError } from "@ai-sdk/provider";
import type {
  JSONValue,
  LanguageModelV3CallOptions,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
} from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import { builtinScripts, createScriptedModel } from "@wardrik/testing";
import type { ScriptContext, ScriptedModel } from "@wardrik/testing";

const user = (text: string): LanguageModelV3Message => ({ role: "user", content: [{ type: "text", text }] });
const assistantText = (text: string): LanguageModelV3Message => ({ role: "assistant", content: [{ type: "text", text }] });
const assistantCall = (id: string, toolName: string, input: unknown): LanguageModelV3Message => ({
  role: "assistant",
  content: [{ type: "tool-call", toolCallId: id, toolName, input }],
});
const toolResult = (id: string, toolName: string, output: unknown): LanguageModelV3Message => ({
  role: "tool",
  content: [
    {
      type: "tool-result",
      toolCallId: id,
      toolName,
      output: typeof output === "string" ? { type: "text", value: output } : { type: "json", value: output as JSONValue },
    },
  ],
});

async function collect(model: ScriptedModel, options: LanguageModelV3CallOptions): Promise<LanguageModelV3StreamPart[]> {
  const { stream } = await model.doStream(options);
  const parts: LanguageModelV3StreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

async function reply(
  model: ScriptedModel,
  prompt: LanguageModelV3Prompt,
): Promise<{ text: string; calls: { toolName: string; input: unknown }[] }> {
  const parts = await collect(model, { prompt });
  return {
    text: parts.map((p) => (p.type === "text-delta" ? p.delta : "")).join(""),
    calls: parts.flatMap((p) => (p.type === "tool-call" ? [{ toolName: p.toolName, input: JSON.parse(p.input) as unknown }] : [])),
  };
}

describe("step selection", () => {
  const script = {
    steps: [{ tool_calls: [{ tool: "files/list", args: {} }] }, { text: "first turn done" }],
  };

  it("plays steps by the number of assistant messages since the latest user message", async () => {
    const model = createScriptedModel(script);
    const turn1 = [user("hi")];
    expect((await reply(model, turn1)).calls).toEqual([{ toolName: "files__list", input: {} }]);
    const turn1b = [...turn1, assistantCall("c1", "files__list", {}), toolResult("c1", "files__list", "[]")];
    expect((await reply(model, turn1b)).text).toBe("first turn done");
    // Past the end the last step repeats.
    const turn1c = [...turn1b, assistantText("first turn done"), user("again?"), assistantText("x")];
    expect((await reply(model, turn1c)).text).toBe("first turn done");
  });

  it("starts every turn from the first step", async () => {
    const model = createScriptedModel(script);
    const history = [user("hi"), assistantCall("c1", "files__list", {}), toolResult("c1", "files__list", "[]"), assistantText("done")];
    expect((await reply(model, [...history, user("next")])).calls).toHaveLength(1);
  });

  it("picks the first scenario whose pattern matches, else the default steps", async () => {
    const model = createScriptedModel({
      steps: [{ text: "default" }],
      scenarios: [
        { match: "refund", steps: [{ text: "refunding" }] },
        { match: "^status\\b", steps: [{ text: "all good" }] },
      ],
    });
    expect((await reply(model, [user("Please REFUND order 7")])).text).toBe("refunding");
    expect((await reply(model, [user("status please")])).text).toBe("all good");
    expect((await reply(model, [user("hello")])).text).toBe("default");
  });

  it("fails a call that no scenario matches when there are no default steps", async () => {
    const model = createScriptedModel({ scenarios: [{ match: "x", steps: [{ text: "x" }] }] }, { modelId: "strict" });
    await expect(model.doStream({ prompt: [user("nope")] })).rejects.toThrow(/Script "strict": no scenario matches "nope"/);
  });

  it("rejects a script without steps or with a bad pattern when created", () => {
    expect(() => createScriptedModel({})).toThrow(/has no steps/);
    expect(() => createScriptedModel({ scenarios: [{ match: "(", steps: [{ text: "x" }] }] })).toThrow(/scenarios\[0\]\.match/);
  });

  it("passes a function script the context it needs", async () => {
    const seen: ScriptContext[] = [];
    const model = createScriptedModel((ctx) => {
      seen.push(ctx);
      return ctx.stepIndex === 0
        ? { tool_calls: [{ tool: "files/read", args: { path: "a" } }] }
        : { text: `got ${String(ctx.lastToolResults[0]?.output)}` };
    });
    const tools = [{ type: "function" as const, name: "files__read", inputSchema: { type: "object" as const } }];
    await model.doStream({ prompt: [user("go")], tools });
    const r = await reply(model, [user("go"), assistantCall("c1", "files__read", { path: "a" }), toolResult("c1", "files__read", "hello")]);
    expect(r.text).toBe("got hello");
    expect(seen[0]).toMatchObject({ callIndex: 0, stepIndex: 0, lastUserMessage: "go", lastToolResults: [], tools });
    expect(seen[1]).toMatchObject({ callIndex: 1, stepIndex: 1, lastToolResults: [{ toolName: "files/read", output: "hello" }] });
  });
});

describe("templates", () => {
  it("fills {{message}}, {{result}} and {{call_count}} in text and, recursively, in args", async () => {
    const model = createScriptedModel({
      steps: [
        {
          tool_calls: [
            { tool: "notes/save", args: { title: "Q: {{message}}", tags: ["{{call_count}}"], meta: { n: 1, q: "{{ message }}" } } },
          ],
        },
        { text: "result={{result}} call={{call_count}} unknown={{nope}}" },
      ],
    });
    const first = await reply(model, [user("why?")]);
    expect(first.calls[0]).toEqual({ toolName: "notes__save", input: { title: "Q: why?", tags: ["1"], meta: { n: 1, q: "why?" } } });
    const second = await reply(model, [user("why?"), assistantCall("c", "notes__save", {}), toolResult("c", "notes__save", { id: 4 })]);
    expect(second.text).toBe('result={"id":4} call=2 unknown={{nope}}');
  });

  it("uses the content field of an object result, as a file read returns", async () => {
    const model = createScriptedModel(builtinScripts.demo!);
    const readResult = { path: "notes/last-question.md", content: "What changed today?" };
    const r = await reply(model, [
      user("What changed today?"),
      assistantCall("c1", "files__write", {}),
      toolResult("c1", "files__write", { path: "notes/last-question.md", bytes: 19 }),
      assistantCall("c2", "files__read", {}),
      toolResult("c2", "files__read", readResult),
    ]);
    expect(r.text).toBe('I saved your question in notes/last-question.md. Reading it back: "What changed today?"');
    // The same when the runtime sends the object as JSON text.
    const asText = await reply(model, [
      user("q"),
      assistantText(""),
      assistantCall("c2", "files__read", {}),
      toolResult("c2", "files__read", JSON.stringify(readResult)),
    ]);
    expect(asText.text).toContain('"What changed today?"');
  });

  it("plays the demo script: write, read, then quote", async () => {
    const model = createScriptedModel(builtinScripts.demo!);
    const first = await reply(model, [user("Hello there")]);
    expect(first.calls).toEqual([{ toolName: "files__write", input: { path: "notes/last-question.md", content: "Hello there" } }]);
    const second = await reply(model, [
      user("Hello there"),
      assistantCall("c1", "files__write", {}),
      toolResult("c1", "files__write", "ok"),
    ]);
    expect(second.calls).toEqual([{ toolName: "files__read", input: { path: "notes/last-question.md" } }]);
  });

  it("echo replies with the message", async () => {
    expect((await reply(createScriptedModel(builtinScripts.echo!), [user("ping")])).text).toBe("You said: ping");
  });
});

describe("stream and generate results", () => {
  it("streams stream-start, text parts, tool calls, then finish", async () => {
    const model = createScriptedModel({
      steps: [
        {
          text: "Let me write that file for you now.",
          tool_calls: [
            { tool: "files/write", args: { path: "a.md" } },
            { tool: "files/read", args: { path: "a.md" } },
          ],
        },
      ],
    });
    const parts = await collect(model, { prompt: [user("write it")] });
    const types = parts.map((p) => p.type);
    expect(types[0]).toBe("stream-start");
    expect(types[1]).toBe("text-start");
    const deltas = parts.filter((p) => p.type === "text-delta");
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((d) => d.delta).join("")).toBe("Let me write that file for you now.");
    expect(types.slice(-4)).toEqual(["text-end", "tool-call", "tool-call", "finish"]);
    const calls = parts.filter((p) => p.type === "tool-call");
    expect(calls.map((c) => c.toolCallId)).toEqual(["call_script_1", "call_script_2"]);
    const finish = parts.at(-1);
    expect(finish?.type === "finish" && finish.finishReason).toEqual({ unified: "tool-calls", raw: "tool_calls" });
  });

  it("numbers tool call IDs per model instance", async () => {
    const script = { steps: [{ tool_calls: [{ tool: "a/b", args: {} }] }] };
    const one = createScriptedModel(script);
    const two = createScriptedModel(script);
    const ids = async (m: ScriptedModel) =>
      (await collect(m, { prompt: [user("x")] })).flatMap((p) => (p.type === "tool-call" ? [p.toolCallId] : []));
    expect(await ids(one)).toEqual(["call_script_1"]);
    expect(await ids(one)).toEqual(["call_script_2"]);
    expect(await ids(two)).toEqual(["call_script_1"]);
  });

  it("estimates usage from characters, or reports the step's usage", async () => {
    const model = createScriptedModel({
      scenarios: [{ match: "set", steps: [{ text: "ok", usage: { input: 1000, output: 50, cached_input: 800 } }] }],
      steps: [{ text: "12345678" }],
    });
    const prompt: LanguageModelV3Prompt = [{ role: "system", content: "x".repeat(10) }, user("y".repeat(7))];
    const { usage, finishReason } = await model.doGenerate({ prompt });
    expect(finishReason).toEqual({ unified: "stop", raw: "stop" });
    expect(usage.inputTokens).toEqual({ total: 5, noCache: 5, cacheRead: 0, cacheWrite: 0 });
    expect(usage.outputTokens).toEqual({ total: 2, text: 2, reasoning: 0 });
    const set = await model.doGenerate({ prompt: [user("set")] });
    expect(set.usage.inputTokens).toEqual({ total: 1000, noCache: 200, cacheRead: 800, cacheWrite: 0 });
    expect(set.usage.outputTokens.total).toBe(50);
  });

  it("returns text and tool calls from doGenerate", async () => {
    const model = createScriptedModel({
      steps: [{ text: "calling", tool_calls: [{ tool: "files/write", args: { path: "{{message}}" } }] }],
    });
    const result = await model.doGenerate({ prompt: [user("p.md")] });
    expect(result.content).toEqual([
      { type: "text", text: "calling" },
      { type: "tool-call", toolCallId: "call_script_1", toolName: "files__write", input: '{"path":"p.md"}' },
    ]);
  });

  it("records every call's options", async () => {
    const model = createScriptedModel(builtinScripts.echo!, { modelId: "echo" });
    const tools = [{ type: "function" as const, name: "files__read", description: "Read", inputSchema: { type: "object" as const } }];
    await model.doStream({ prompt: [user("a")], tools });
    await model.doGenerate({ prompt: [user("b")] });
    expect(model.calls).toHaveLength(2);
    expect(model.calls[0]?.tools).toEqual(tools);
    expect(model.calls[1]?.prompt).toEqual([user("b")]);
    expect(model).toMatchObject({ specificationVersion: "v3", provider: "script", modelId: "echo", supportedUrls: {} });
  });
});

describe("failures and timing", () => {
  it("throws an APICallError with the status, retryability and retry-after", async () => {
    const model = createScriptedModel({
      scenarios: [{ match: "bad", steps: [{ error: { status: 400, message: "prompt too long" } }] }],
      steps: [{ error: { status: 429, retry_after: 7 } }],
    });
    const limited = await model.doStream({ prompt: [user("x")] }).catch((e: unknown) => e);
    expect(APICallError.isInstance(limited)).toBe(true);
    const e = limited as APICallError;
    expect(e).toMatchObject({ statusCode: 429, isRetryable: true, responseHeaders: { "retry-after": "7" } });
    const bad = (await model.doGenerate({ prompt: [user("bad")] }).catch((err: unknown) => err)) as APICallError;
    expect(bad).toMatchObject({ statusCode: 400, isRetryable: false, message: "prompt too long" });
  });

  it("hangs until the call is aborted, then rejects with an AbortError", async () => {
    const model = createScriptedModel({ steps: [{ hang: true }] });
    const controller = new AbortController();
    const pending = model.doStream({ prompt: [user("x")], abortSignal: controller.signal });
    let settled = false;
    void pending.then(
      () => (settled = true),
      () => (settled = true),
    );
    await new Promise((r) => setTimeout(r, 30));
    expect(settled).toBe(false);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
  });

  it("rejects at once when the signal is already aborted", async () => {
    const model = createScriptedModel(builtinScripts.echo!);
    await expect(model.doStream({ prompt: [user("x")], abortSignal: AbortSignal.abort() })).rejects.toMatchObject({ name: "AbortError" });
  });

  it("waits delay_ms before answering, and the delay is abortable", async () => {
    const model = createScriptedModel({ steps: [{ delay_ms: 60, text: "late" }] });
    const started = Date.now();
    expect((await reply(model, [user("x")])).text).toBe("late");
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);

    const slow = createScriptedModel({ delay_ms: 10_000, steps: [{ text: "never" }] });
    const controller = new AbortController();
    const pending = slow.doGenerate({ prompt: [user("x")], abortSignal: controller.signal });
    setTimeout(() => controller.abort(), 10);
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
  });

  it("lets the delayMs option override the script's delay", async () => {
    const model = createScriptedModel({ delay_ms: 10_000, steps: [{ text: "fast" }] }, { delayMs: 0 });
    expect((await reply(model, [user("x")])).text).toBe("fast");
  });
});
