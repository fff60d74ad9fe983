import { afterEach, describe, expect, it } from "vitest";
import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import { chooseSplit } from "../../src/models/compaction.js";
import type { HistoryEntry } from "../../src/store/message-format.js";
import { createHarness, type Harness } from "../helpers/runtime-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const words = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}-${i}`).join(" ");

function checkPairs(prompt: LanguageModelV3Prompt): void {
  for (let i = 0; i < prompt.length; i++) {
    const m = prompt[i]!;
    if (m.role !== "tool") continue;
    const prev = prompt[i - 1];
    expect(prev?.role).toBe("assistant");
    const callIds = (prev!.content as { type: string; toolCallId?: string }[])
      .filter((p) => p.type === "tool-call")
      .map((p) => p.toolCallId);
    for (const r of m.content as { toolCallId: string }[]) expect(callIds).toContain(r.toolCallId);
  }
}

describe("compaction", () => {
  it("keeps a conversation ten times larger than its window working, and the full history readable", async () => {
    h = await createHarness();
    const window = 1500;
    const a = await h.agent({
      name: "a",
      context_window: window,
      script: {
        steps: [
          { tool_calls: [{ tool: "files/write", args: { path: "n.md", content: "{{message}}" } }] },
          { text: `noted: ${words(60, "reply")}` },
        ],
      },
    });
    for (let i = 0; i < 50; i++) {
      const msg = `message ${i}: ${words(40, `m${i}`)}`;
      const end = await h.ask(a, msg);
      expect(end.type).toBe("dev.wardrik.turn.completed");
    }
    const compacted = h.events.filter((e) => e.type === "dev.wardrik.conversation.compacted");
    expect(compacted.length).toBeGreaterThan(2);
    expect(String(compacted[0]!.data.summary)).toMatch(/^Summary of/);
    const model = h.models.get("a")!;
    for (const call of model.calls) {
      if (call.prompt[0]?.role === "system" && String(call.prompt[0].content).startsWith("[wardrik:compaction]")) continue;
      // Every prompt the agent sent stayed inside the window, with calls and results together.
      expect(JSON.stringify(call.prompt).length / 4).toBeLessThan(window);
      checkPairs(call.prompt);
    }
    const last = model.calls.at(-1)!.prompt;
    expect(last.some((m) => m.role === "system" && String(m.content).startsWith("Summary of the earlier conversation"))).toBe(true);
    // The store keeps everything: 4 messages a turn.
    const conv = await h.store.conversations.find(a.id, "main");
    const history = await h.store.conversations.history(conv!.id);
    expect(history).toHaveLength(200);
    expect(JSON.stringify(history).length / 4).toBeGreaterThan(window * 10);
  });

  it("never cuts between a tool call and its result", () => {
    const entry = (seq: number, role: "user" | "assistant" | "tool"): HistoryEntry => ({
      seq,
      message:
        role === "user"
          ? { role, text: "u", input: "msg" }
          : role === "assistant"
            ? { role, text: "a", toolCalls: [] }
            : { role, results: [] },
    });
    const entries = [
      entry(1, "user"),
      entry(2, "assistant"),
      entry(3, "tool"),
      entry(4, "assistant"),
      entry(5, "tool"),
      entry(6, "assistant"),
    ];
    for (let keep = 0; keep < 8; keep++) {
      const split = chooseSplit(entries, keep, () => 1);
      if (split > 0) expect(entries[split]!.message.role).not.toBe("tool");
    }
    expect(chooseSplit(entries, 2, () => 1)).toBe(5);
    expect(chooseSplit(entries, 3, () => 1)).toBe(3);
  });
});
