/**
 * A model reply that arrives faster than it is read (here: 20,000 one-character
 * deltas already buffered) is read in slices: other work of the event loop
 * (another org's request, a timer) runs before the reply is done, rather than
 * waiting for all of it. No time is asserted: only that the loop got a turn.
 */
import type { LanguageModelV3, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import { callModel } from "../../src/runtime/call-model.js";

/** A model whose whole reply is in its stream's queue before the first read, as after a burst from the network. */
function bufferedModel(parts: LanguageModelV3StreamPart[]): LanguageModelV3 {
  return {
    specificationVersion: "v3",
    provider: "buffered",
    modelId: "burst",
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error("stream only")),
    doStream: () =>
      Promise.resolve({
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      }),
  };
}

const CHARS = 20_000;

describe("reading a streamed reply", () => {
  it("lets the event loop run other work before a buffered 20,000-character reply is read to its end", async () => {
    const parts: LanguageModelV3StreamPart[] = [{ type: "text-start", id: "t" }];
    for (let i = 0; i < CHARS; i++) parts.push({ type: "text-delta", id: "t", delta: "x" });
    parts.push({ type: "text-end", id: "t" });
    parts.push({
      type: "finish",
      finishReason: { unified: "stop", raw: "stop" },
      usage: {
        inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: CHARS, text: CHARS, reasoning: 0 },
      },
    });
    let deltas = 0;
    let otherWorkRanAfter: number | undefined;
    setImmediate(() => (otherWorkRanAfter = deltas));
    const reply = await callModel({
      model: bufferedModel(parts),
      prompt: [{ role: "user", content: [{ type: "text", text: "go" }] }],
      tools: [],
      signal: new AbortController().signal,
      retries: 0,
      onDelta: () => deltas++,
    });
    expect(reply.text).toBe("x".repeat(CHARS));
    expect(deltas).toBe(CHARS);
    expect(otherWorkRanAfter ?? CHARS, "the other work ran only once the reply was read").toBeLessThan(CHARS);
  });
});
